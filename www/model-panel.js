// The model panel: the picker, the chosen model's blurb and the editors that
// belong to it (the model facts line is painted with the other panels).

import { $, state, catalogue, currentModel, currentPrompt } from "./app-state.js";
import { loadModel } from "./engine.js";
import { updateUrl } from "./url-sync.js";
import { fillLogitsEditor } from "./toy-models.js";
import { makeEl, setText } from "./render/dom.js";

/** Fill the picker from the catalogue. */
export function fillModelPicker() {
  const select = /** @type {HTMLSelectElement} */ ($("#model-select"));
  select.replaceChildren(...catalogue.models.map((m) => makeEl("option", { value: m.name }, m.title)));
}

/** Show the blurb and the editors that belong to the current model. */
export function showModelPanel() {
  const entry = currentModel();
  setText($("#model-blurb"), entry?.blurb ?? "");
  $("#logits-editor").hidden = state.model !== "logits10";
  $("#bigram-tools").hidden = state.model !== "bigram-abc";
  if (state.model === "logits10") fillLogitsEditor();
  /** @type {HTMLSelectElement} */ ($("#model-select")).value = state.model;
  /** @type {HTMLTextAreaElement} */ const prompt = $("#prompt");
  if (document.activeElement !== prompt) prompt.value = currentPrompt();
}

/** Picking a model loads it with its own prompt. */
export function wireModelPicker() {
  $("#model-select").addEventListener("change", () => {
    state.model = /** @type {HTMLSelectElement} */ ($("#model-select")).value;
    state.prompt = null;
    state.steps = 0;
    state.logits = null;
    updateUrl();
    showModelPanel();
    loadModel();
  });
}
