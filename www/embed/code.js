// The "Copy embed code" button: an iframe snippet of the current view.

import { state } from "../state/store.js";
import { linkQuery, onUrlWritten } from "../panels/url-sync.js";
import { $, setText } from "../render/dom.js";

/** The iframe snippet for the current view. */
export function embedCode() {
  const src = `${location.origin}${location.pathname}${linkQuery({ embed: true })}`;
  const attr = src.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  return `<iframe src="${attr}" width="720" height="640" style="border:0" title="Next-token playground" loading="lazy"></iframe>`;
}

/** Show the snippet, select it and copy it to the clipboard. */
async function copyEmbed() {
  const code = /** @type {HTMLTextAreaElement} */ ($("#embed-code"));
  code.hidden = false;
  code.value = embedCode();
  code.select();
  const fileNote = state.file ? " A model opened from your disk is not part of it: the link opens the default model." : "";
  try {
    await navigator.clipboard.writeText(code.value);
    setText($("#embed-msg"), `Copied to the clipboard.${fileNote}`);
  } catch {
    setText($("#embed-msg"), `Select the code above and copy it (the clipboard is not available here).${fileNote}`);
  }
}

/** The button; a shown snippet follows every URL write. */
export function wireEmbedCode() {
  $("#btn-embed").addEventListener("click", copyEmbed);
  onUrlWritten(refreshEmbedCode);
}

/** Keep a shown snippet in step with the view. */
function refreshEmbedCode() {
  const code = /** @type {HTMLTextAreaElement} */ ($("#embed-code"));
  if (code && !code.hidden) code.value = embedCode();
}
