// What the page knows, in one place: the view state (mirrored in the URL),
// what the panels draw (written only from the engine's replies), and the
// model catalogue. Every other page module reads and writes these objects;
// none of them keeps a copy.

import { parseQuery } from "./url.js";
import { toEngineSettings } from "./settings.js";
import { makeSpeed } from "./speed.js";

/** @param {string} sel */
export const $ = (sel) => /** @type {HTMLElement} */ (document.querySelector(sel));

/** The URL as opened: the view state and what was wrong with it. */
export const parsed = parseQuery(location.search);
/** The view state (model, prompt, settings, panels, steps...): what a link reproduces. */
export const state = parsed.state;

/** What the panels draw; only the engine's replies write here. */
export const view = {
  info: null,
  report: null,          // last StepReport
  distribution: null,    // what the distribution panels show (report's or a preview)
  chosen: null,          // the token drawn from `distribution`, if any
  previewShown: false,   // `distribution` is a preview not painted yet
  beam: null, beamBusy: false, beamProgress: null,
  beamEstimateMs: null,  // set when a search would take this long: the panel offers a button instead of searching
  stepMs: null,          // the worker's time for the last decode step
  speed: makeSpeed(),    // the engine's prefill and decode timings since the last prompt (speed.js)
  train: null, trainBusy: false,
  score: null, scoreBusy: false, scoreSelected: null,   // the score panel's report, and the token whose details show
  logitsEdited: false,   // the engine holds a vector other than the course's
  running: false,
  userStopped: false,
  loading: false,
  ready: false,
};

/** The model catalogue (models/index.json and the built-in models), filled at boot. */
export const catalogue = { models: [], defaultName: "logits10", problem: null };

/** Settings for the engine from the view state. */
export function engineSettings() {
  return toEngineSettings(state.settings);
}

/** The catalogue entry of the current model. */
export function currentModel() {
  return catalogue.models.find((m) => m.name === state.model);
}

/** The prompt in force (the model's default when the URL gave none; in chat mode its chat prompt). */
export function currentPrompt() {
  const entry = currentModel();
  return state.prompt ?? (state.settings.chat ? entry?.chatPrompt : undefined) ?? entry?.prompt ?? "";
}
