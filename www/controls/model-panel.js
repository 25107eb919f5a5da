//# allFunctionsCalledOnLoad
// The model panel: the picker (with each file's size and whether it can be
// loaded), the chosen model's blurb and the editors that belong to it, a GGUF
// file opened from disk as a model of its own, and the chat switch, shown for
// a model with a chat template. (The model facts line is painted with the
// other panels.) The panel follows the store's model changes by itself.

import * as store from "../state/store.js";
import { state, view, catalogue, currentModel, currentPrompt } from "../state/store.js";
import { checkAvailability, pickerLabel } from "../state/catalogue.js";
import { loadModel } from "../engine/model-load.js";
import { onSetting } from "./dispatch.js";
import { updateUrl } from "../panels/url-sync.js";
import { KV_TYPES } from "../state/url.js";
import { fillLogitsEditor } from "./toy-models.js";
import { say } from "../panels/messages.js";
import { $, makeEl, setText } from "../render/dom.js";

store.subscribe("model", () => { fillModelPicker(); showModelPanel(); });
// Settings put in force at once (an imported configuration) may turn chat mode on or off.
store.subscribe("settings", () => { /** @type {HTMLInputElement} */ ($("#ctl-chat")).checked = state.settings.chat; });

/** Fill the picker from the catalogue; a file that is not on the server cannot be picked. */
export function fillModelPicker() {
  const select = /** @type {HTMLSelectElement} */ ($("#model-select"));
  select.replaceChildren(...catalogue.models.map((m) => {
    const opt = makeEl("option", { value: m.name }, pickerLabel(m));
    if (m.availability === "absent" || m.availability === "wrong-size") /** @type {HTMLOptionElement} */ (opt).disabled = true;
    return opt;
  }));
  select.value = state.model ?? "";
}

/**
 * Ask, for every GGUF entry, whether its file is cached or served, and show
 * the answer in the picker (the current model's own load waits for its answer).
 */
export function checkModelFiles() {
  for (const m of catalogue.models) {
    if (!("gguf" in m.source) || m.availability !== "unknown") continue;
    checkAvailability(m).then(fillModelPicker);
  }
}

/** Show the blurb, the editors and the switches that belong to the current model. */
export function showModelPanel() {
  const entry = currentModel();
  setText($("#model-blurb"), entry?.blurb ?? "");
  $("#logits-editor").hidden = state.model !== "logits10";
  $("#bigram-tools").hidden = state.model !== "bigram-abc";
  if (state.model === "logits10") fillLogitsEditor();
  /** @type {HTMLSelectElement} */ ($("#model-select")).value = state.model;
  // The course models keep their own numbers (lesson 21's KV sizes count 4 bytes): no choice for them.
  /** @type {HTMLSelectElement} */ ($("#kv-type-select")).value = state.kv ?? "";
  $("#kv-type-row").hidden = !!entry && "builtin" in entry.source;
  /** @type {HTMLTextAreaElement} */ const prompt = $("#prompt");
  if (document.activeElement !== prompt) prompt.value = currentPrompt();
  $("#chat-switch").hidden = !view.info?.chat;
  /** @type {HTMLInputElement} */ ($("#ctl-chat")).checked = state.settings.chat;
}

/** Picking a model loads it with its own prompt; the chat switch re-runs the prompt. */
export function wireModelPicker() {
  $("#model-select").addEventListener("change", () => {
    store.pickModel(/** @type {HTMLSelectElement} */ ($("#model-select")).value);
    updateUrl();
    loadModel();
  });
  // The KV cache's numbers are chosen when a model loads: a change reloads it (prompt and steps replayed).
  const kv = /** @type {HTMLSelectElement} */ ($("#kv-type-select"));
  kv.addEventListener("change", () => {
    store.setKv(KV_TYPES.includes(kv.value) ? kv.value : null);
    updateUrl();
    loadModel();
  });
  const chat = /** @type {HTMLInputElement} */ ($("#ctl-chat"));
  chat.addEventListener("change", () => {
    store.setSteps(0);
    // The page's default stop string (a blank line) would cut a chat reply at
    // its first paragraph; in chat mode the reply ends at the end-of-turn token.
    if (chat.checked && JSON.stringify(state.settings.stop) === JSON.stringify(["\n\n"])) {
      store.replaceSettings({ stop: [] });
      say("Chat mode: the stop string (a blank line) is cleared, the reply ends at the model's end-of-turn token.", "info", "chat");
    }
    onSetting("chat", chat.checked, performance.now());
    showModelPanel(); // the default prompt differs between the two modes
  });
}
