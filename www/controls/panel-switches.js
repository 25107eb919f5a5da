// Which panels are shown (the switches in the model panel, mirrored in the
// URL), and each panel's SVG and PNG buttons.

import { state } from "../state/store.js";
import { PANEL_KEYS } from "../state/url.js";
import { updateUrl } from "../state/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { scheduleBeam } from "../engine/generation.js";
import { say } from "../panels/messages.js";
import { makeEl } from "../render/dom.js";
import { savePanelSvg, savePanelPng } from "../panels/figure.js";

/** Apply the panel list to the page. */
export function showPanels() {
  for (const key of PANEL_KEYS) {
    const el = document.getElementById(`p-${key}`);
    // Outside embed mode the model panel stays: it holds the panel switches.
    if (el) el.hidden = !state.panels.includes(key) && !(key === "model" && !state.embed);
    const cb = /** @type {HTMLInputElement|null} */ (document.getElementById(`show-${key}`));
    if (cb) cb.checked = state.panels.includes(key);
  }
}

/** The panel switches. */
export function wirePanelSwitches() {
  for (const key of PANEL_KEYS) {
    const cb = document.getElementById(`show-${key}`);
    cb?.addEventListener("change", () => {
      state.panels = PANEL_KEYS.filter((k) => /** @type {HTMLInputElement} */ (document.getElementById(`show-${k}`))?.checked);
      showPanels();
      updateUrl();
      scheduleRender();
      scheduleBeam();
    });
  }
}

/** An SVG and a PNG button in the head of every panel that has a place for them. */
export function addFigureButtons() {
  for (const panel of document.querySelectorAll("section.panel")) {
    const name = panel.id.replace(/^p-/, "");
    const bar = panel.querySelector(".fig-buttons");
    if (!bar) continue;
    const svg = makeEl("button", { type: "button", class: "mini", "aria-label": `save the ${name} panel as SVG` }, "SVG");
    const png = makeEl("button", { type: "button", class: "mini", "aria-label": `save the ${name} panel as PNG` }, "PNG");
    svg.addEventListener("click", () => savePanelSvg(/** @type {HTMLElement} */ (panel), `next-token-${name}`));
    png.addEventListener("click", () => savePanelPng(/** @type {HTMLElement} */ (panel), `next-token-${name}`).catch((e) => say(`PNG: ${e.message}`)));
    bar.append(svg, png);
  }
}
