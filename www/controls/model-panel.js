// The model panel: the picker (with each file's size and whether it can be
// loaded), the chosen model's blurb and the editors that belong to it, a GGUF
// file opened from disk as a model of its own, and the chat switch, shown for
// a model with a chat template. (The model facts line is painted with the
// other panels.)

import { $, state, view, catalogue, currentModel, currentPrompt } from "../state/store.js";
import { checkAvailability, pickerLabel } from "../state/catalogue.js";
import { loadModel } from "../engine/model-load.js";
import { onSetting } from "./dispatch.js";
import { updateUrl } from "../state/url-sync.js";
import { KV_TYPES } from "../state/url.js";
import { fillLogitsEditor } from "./toy-models.js";
import { say } from "../panels/messages.js";
import { makeEl, setText } from "../render/dom.js";

/** What main.js wires in: the controls show settings changed here. */
export const panelHooks = { settingsChanged: () => {} };

/** The name a model opened from disk has in the picker (never in a link). */
export const FILE_MODEL = "file";

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

/**
 * A model is loaded: a chat link opened on a model without a chat template
 * falls back to plain continuation, with a message.
 * @param {any} info ModelInfo
 */
export function adaptToModel(info) {
  if (state.settings.chat && !info.chat) {
    state.settings.chat = false;
    say(`chat=1: ${info.name} has no chat template, so the prompt is continued as plain text.`, "info", "chat");
    updateUrl();
  }
  showModelPanel();
}

/**
 * A GGUF file from the user's disk is loaded: it becomes the current model,
 * with an entry of its own in the picker (until another model is picked).
 * @param {string} name
 * @param {any} info ModelInfo
 */
export function adoptFileModel(name, info) {
  dropFileModel();
  catalogue.models.push({
    name: FILE_MODEL, title: `Your file: ${name}`,
    blurb: `Opened from your disk: it never leaves this browser, and a link to this page does not include it.${info.quant ? ` Weights: ${info.quant}.` : ""}`,
    prompt: "Once upon a time", chatPrompt: "Tell me a short story about a robot.", chat: !!info.chat,
    source: { file: name },
  });
  state.model = FILE_MODEL;
  state.file = { name };
  state.prompt = null;
  state.steps = 0;
  state.logits = null;
  fillModelPicker();
  updateUrl();
}

/** Forget the model opened from disk (another model was picked). */
function dropFileModel() {
  const i = catalogue.models.findIndex((m) => m.name === FILE_MODEL);
  if (i >= 0) catalogue.models.splice(i, 1);
  state.file = null;
}

/** Picking a model loads it with its own prompt; the chat switch re-runs the prompt. */
export function wireModelPicker() {
  $("#model-select").addEventListener("change", () => {
    const name = /** @type {HTMLSelectElement} */ ($("#model-select")).value;
    if (name !== FILE_MODEL && state.file) { dropFileModel(); fillModelPicker(); }
    state.model = name;
    state.prompt = null;
    state.steps = 0;
    state.logits = null;
    updateUrl();
    showModelPanel();
    loadModel();
  });
  // The KV cache's numbers are chosen when a model loads: a change reloads it (prompt and steps replayed).
  const kv = /** @type {HTMLSelectElement} */ ($("#kv-type-select"));
  kv.addEventListener("change", () => {
    state.kv = KV_TYPES.includes(kv.value) ? kv.value : null;
    updateUrl();
    loadModel();
  });
  const chat = /** @type {HTMLInputElement} */ ($("#ctl-chat"));
  chat.addEventListener("change", () => {
    state.steps = 0;
    // The page's default stop string (a blank line) would cut a chat reply at
    // its first paragraph; in chat mode the reply ends at the end-of-turn token.
    if (chat.checked && JSON.stringify(state.settings.stop) === JSON.stringify(["\n\n"])) {
      state.settings.stop = [];
      panelHooks.settingsChanged();
      say("Chat mode: the stop string (a blank line) is cleared, the reply ends at the model's end-of-turn token.", "info", "chat");
    }
    onSetting("chat", chat.checked, performance.now());
    showModelPanel(); // the default prompt differs between the two modes
  });
}
