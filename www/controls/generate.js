//# allFunctionsCalledOnLoad
// The generation controls: Step, Run/Stop, Step back and Reset, a click (or
// Enter) on a generated token to rewind to it, the beam panel's Search
// button, the prompt box and the KV cache switch.

import { state, view, setPrompt, subscribe } from "../state/store.js";
import { updateUrl } from "../panels/url-sync.js";
import { replayOrSay, stopRun, doStep, doRun, doRewind, doBeam } from "../engine/generation.js";
import { doReset } from "../engine/model-load.js";
import { onSetting } from "./dispatch.js";
import { $ } from "../render/dom.js";

/** How long the prompt box waits after the last keystroke before the model reads it. */
const PROMPT_SETTLE_MS = 300;

export function wireGeneration() {
  $("#btn-step").addEventListener("click", doStep);
  $("#btn-run").addEventListener("click", doRun);
  $("#btn-reset").addEventListener("click", doReset);
  $("#btn-back").addEventListener("click", () => doRewind(view.transcript.generated.length - 1));

  // Clicking (or Enter on) a generated token rewinds to the step that drew it.
  const out = $("#p-output .body");
  const rewindFrom = (target) => {
    const tok = /** @type {HTMLElement} */ (target).closest?.("[data-action=rewind]");
    if (tok) doRewind(Number(tok.getAttribute("data-step")));
  };
  out.addEventListener("click", (e) => rewindFrom(e.target));
  out.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); rewindFrom(e.target); } });

  $("#p-beam .body").addEventListener("click", (e) => {
    if (/** @type {HTMLElement} */ (e.target).closest?.("[data-action=beam-search]")) doBeam();
  });

  let promptTimer = 0;
  $("#prompt").addEventListener("input", () => {
    clearTimeout(promptTimer);
    promptTimer = setTimeout(async () => {
      setPrompt(/** @type {HTMLTextAreaElement} */ ($("#prompt")).value);
      updateUrl();
      await stopRun();
      await replayOrSay();
    }, PROMPT_SETTLE_MS);
  });

  const cacheBox = /** @type {HTMLInputElement} */ ($("#ctl-use_cache"));
  cacheBox.checked = state.settings.use_cache;
  subscribe("settings", () => { cacheBox.checked = state.settings.use_cache; });
  cacheBox.addEventListener("change", () => onSetting("use_cache", cacheBox.checked, performance.now()));
}
