// Save a panel as a figure: SVG (the panel drawn inside a foreignObject with
// the page's styles, or its chart when it is one) or PNG (that SVG on a
// canvas), from the SVG and PNG buttons in each panel's head.

import { say } from "./messages.js";
import { makeEl } from "../render/dom.js";

/**
 * Collect the page's own CSS so the figure looks like the panel.
 * @returns {string}
 */
function collectCss() {
  let css = "";
  for (const sheet of document.styleSheets) {
    try { for (const rule of sheet.cssRules) css += `${rule.cssText}\n`; } catch { /* cross-origin sheet: skip */ }
  }
  return css;
}

/**
 * Serialise a panel to a standalone SVG document.
 * @param {HTMLElement} panel
 * @returns {{ svg: string, width: number, height: number }}
 */
export function serializePanel(panel) {
  const rect = panel.getBoundingClientRect();
  const width = Math.ceil(rect.width), height = Math.ceil(rect.height);
  const clone = /** @type {HTMLElement} */ (panel.cloneNode(true));
  clone.querySelectorAll(".fig-buttons").forEach((el) => el.remove());
  clone.setAttribute("xmlns", "http://www.w3.org/1999/xhtml");
  clone.style.margin = "0";
  clone.style.width = `${width}px`;
  clone.style.height = `${height}px`;
  // Form state lives in properties, which cloning does not serialise.
  const live = panel.querySelectorAll("input, select, textarea");
  clone.querySelectorAll("input, select, textarea").forEach((el, i) => {
    const src = /** @type {any} */ (live[i]);
    if (src.type === "checkbox" || src.type === "radio") { if (src.checked) el.setAttribute("checked", ""); else el.removeAttribute("checked"); }
    else if (el.tagName === "TEXTAREA") el.textContent = src.value;
    else if (el.tagName === "SELECT") el.querySelectorAll("option").forEach((o, k) => { if (k === src.selectedIndex) o.setAttribute("selected", ""); });
    else el.setAttribute("value", src.value);
  });
  const html = new XMLSerializer().serializeToString(clone);
  // CDATA so selectors such as "a > b" survive the XML parser.
  const style = `<style><![CDATA[${collectCss().replace(/]]>/g, "]] >")}]]></style>`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<foreignObject x="0" y="0" width="${width}" height="${height}"><div xmlns="http://www.w3.org/1999/xhtml" class="figure-root">` +
    `${style}${html}</div></foreignObject></svg>`;
  return { svg, width, height };
}

/**
 * Offer a blob as a download.
 * @param {Blob} blob
 * @param {string} filename
 */
function offerDownload(blob, filename) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

/**
 * Download the panel as SVG.
 * @param {HTMLElement} panel
 * @param {string} name
 */
export function savePanelSvg(panel, name) {
  const { svg } = serializePanel(panel);
  offerDownload(new Blob([svg], { type: "image/svg+xml" }), `${name}.svg`);
}

/**
 * Render the panel to a PNG blob at twice the screen size.
 * @param {HTMLElement} panel
 * @returns {Promise<Blob>}
 */
export async function renderPanelPng(panel) {
  const { svg, width, height } = serializePanel(panel);
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = width * 2;
  canvas.height = height * 2;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.scale(2, 2);
  ctx.drawImage(img, 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the browser could not encode the PNG"))), "image/png"));
}

/**
 * Download the panel as PNG.
 * @param {HTMLElement} panel
 * @param {string} name
 */
export async function savePanelPng(panel, name) {
  offerDownload(await renderPanelPng(panel), `${name}.png`);
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
