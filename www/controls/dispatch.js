//# allFunctionsCalledOnLoad
// Setting dispatch: a moved control, a ban or a bias changes the store, and
// then sets off what the change needs (a preview of the rules, a replay of
// the model, a new beam search, or only the URL). The one way a setting
// travels: control -> here -> store -> engine -> frame -> painter.

import * as store from "../state/store.js";
import { state, view } from "../state/store.js";
import { updateUrl } from "../panels/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { paintChips } from "../panels/paint.js";
import { local, sayEngineError } from "../engine/link.js";
import { replay, doPreview, scheduleBeam } from "../engine/generation.js";
import { $ } from "../render/dom.js";

/** Keys whose change needs the model to run again, not just the rules. */
const REPLAY_KEYS = new Set(["use_cache", "seed", "chat"]);
const BEAM_KEYS = new Set(["beams", "alpha", "beam_len"]);
/** Keys that change nothing the distribution panels show. */
const NO_PREVIEW_KEYS = new Set(["max_new", "stop", "bias_amount", ...BEAM_KEYS]);

/**
 * A control moved to a valid value.
 * @param {string} key
 * @param {any} value
 * @param {number} startedAt the input event's timeStamp
 */
export function onSetting(key, value, startedAt) {
  store.setSetting(key, value);
  updateUrl();
  // A move previewed on this thread paints at once; anything else paints next frame.
  if (!(local.ready && view.ready && view.report) || NO_PREVIEW_KEYS.has(key) || REPLAY_KEYS.has(key)) scheduleRender();
  if (REPLAY_KEYS.has(key)) { if (!view.running) replay().catch(sayEngineError); return; }
  if (BEAM_KEYS.has(key)) { scheduleBeam(); return; }
  if (NO_PREVIEW_KEYS.has(key)) return;
  doPreview(startedAt);
}

/**
 * Many settings at once (an imported configuration): the form, the chain
 * builder and the URL follow, then what the changes need, once: a replay
 * when one of them re-runs the model, else a preview, and a beam search
 * when its settings moved.
 * @param {Record<string, any>} values
 * @returns {string[]} the keys whose values changed
 */
export function onSettings(values) {
  const changed = Object.keys(values).filter((k) => JSON.stringify(values[k]) !== JSON.stringify(state.settings[k]));
  store.replaceSettings(values);
  updateUrl();
  paintChips();
  scheduleRender();
  if (changed.some((k) => REPLAY_KEYS.has(k))) { if (!view.running) replay().catch(sayEngineError); return changed; }
  if (changed.some((k) => BEAM_KEYS.has(k))) scheduleBeam();
  if (changed.some((k) => !NO_PREVIEW_KEYS.has(k))) doPreview(performance.now());
  return changed;
}

/**
 * Ban or unban a token.
 * @param {number} id
 */
export function toggleBan(id) {
  const { banned } = state.settings;
  store.setSetting("banned", banned.includes(id) ? banned.filter((x) => x !== id) : [...banned, id]);
  afterListChange();
}

/**
 * Add (or remove) the chosen bias on a token.
 * @param {number} id
 */
export function toggleBias(id) {
  const { logit_bias: bias, bias_amount: amount } = state.settings;
  store.setSetting("logit_bias", bias.some(([i]) => i === id) ? bias.filter(([i]) => i !== id) : [...bias, [id, amount]]);
  afterListChange();
}

function afterListChange() {
  updateUrl();
  paintChips();
  doPreview(performance.now());
}

/** Clicks on the chips (remove a ban or a bias) and on the distribution's ban/bias buttons. */
export function wireListButtons() {
  $("#ctl-chips").addEventListener("click", (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest?.("button[data-action]");
    if (!b) return;
    const id = Number(b.getAttribute("data-id"));
    if (b.getAttribute("data-action") === "unban") toggleBan(id); else toggleBias(id);
  });
  $("#p-dist .body").addEventListener("click", (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest?.("button[data-action]");
    if (!b) return;
    const id = Number(b.getAttribute("data-id"));
    if (b.getAttribute("data-action") === "ban") toggleBan(id); else toggleBias(id);
  });
}
