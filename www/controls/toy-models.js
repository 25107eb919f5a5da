//# allFunctionsCalledOnLoad
// The course's toy models' own tools in the model panel: the editor of
// lesson 21's ten logits and the in-browser retraining of lesson 18's bigram.

import * as store from "../state/store.js";
import { state } from "../state/store.js";
import { COURSE_LOGITS } from "../state/catalogue.js";
import { ENGINE } from "../state/settings.js";
import { client, sayEngineError } from "../engine/link.js";
import { replay, replayOrSay } from "../engine/generation.js";
import { updateUrl } from "../panels/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { $, makeEl, setText } from "../render/dom.js";

/** Fill the ten inputs from the state (the course's vector unless edited). */
export function fillLogitsEditor() {
  const box = $("#logits-inputs");
  const values = state.logits ?? COURSE_LOGITS;
  if (box.children.length !== 10) {
    box.replaceChildren();
    for (let i = 0; i < 10; i++) {
      const id = `logit-${i}`;
      const cell = makeEl("div", { class: "logit" });
      const input = makeEl("input", { type: "number", id, step: "0.1", min: "-1000", max: "1000" });
      cell.append(makeEl("label", { for: id }, `z${i + 1}`), input);
      box.append(cell);
    }
  }
  box.querySelectorAll("input").forEach((input, i) => {
    if (document.activeElement !== input) /** @type {HTMLInputElement} */ (input).value = String(values[i]);
  });
}

/** Send the edited vector to the engine (refused with a message when a box is not a number). */
async function applyLogits() {
  const inputs = [...$("#logits-inputs").querySelectorAll("input")];
  const values = inputs.map((el) => Number(/** @type {HTMLInputElement} */ (el).value));
  const bad = values.findIndex((v, i) => !Number.isFinite(v) || Math.abs(v) > 1000 || /** @type {HTMLInputElement} */ (inputs[i]).value.trim() === "");
  if (bad >= 0) { setText($("#logits-msg"), `z${bad + 1} must be a number between −1000 and 1000; not applied`); return; }
  setText($("#logits-msg"), "");
  store.setLogits(values.every((v, i) => v === COURSE_LOGITS[i]) ? null : values);
  updateUrl();
  await replayOrSay();
}

async function retrainBigram() {
  store.setTrainBusy(true);
  scheduleRender();
  try {
    // Lesson 18's steps and seed (the engine's), so the curve matches the course.
    const { bigram_steps: steps, bigram_seed: seed } = ENGINE.course;
    const msg = await client.request("train", { steps, seed });
    store.trainDone(msg.result);
    await replay();
  } catch (err) { sayEngineError(err); }
  store.setTrainBusy(false);
  scheduleRender();
}

/** The buttons of both tools. */
export function wireToyModels() {
  $("#logits-apply").addEventListener("click", applyLogits);
  $("#logits-course").addEventListener("click", () => { store.setLogits(null); fillLogitsEditor(); applyLogits(); });
  $("#bigram-retrain").addEventListener("click", retrainBigram);
}
