//# allFunctionsCalledOnLoad
// Which panels are shown: the switches in the model panel, mirrored in the URL.

import { state, setPanels } from "../state/store.js";
import { PANEL_KEYS } from "../state/url.js";
import { updateUrl } from "../panels/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { scheduleBeam, syncInside } from "../engine/generation.js";

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
      setPanels(PANEL_KEYS.filter((k) => /** @type {HTMLInputElement} */ (document.getElementById(`show-${k}`))?.checked));
      showPanels();
      updateUrl();
      scheduleRender();
      scheduleBeam();
      if (key === "inside") syncInside();
    });
  }
}
