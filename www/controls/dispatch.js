// Setting dispatch: what a moved control, a ban or a bias sets off (a
// preview of the rules, a replay of the model, a new beam search, or only
// the URL), and the chips of banned and biased tokens.

import { $, state, view } from "../state/store.js";
import { updateUrl } from "../state/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { local } from "../engine/link.js";
import { replay, doPreview, scheduleBeam } from "../engine/generation.js";
import { sayEngineError } from "../panels/messages.js";
import { renderChips } from "../render/chips.js";

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
  state.settings[key] = value;
  updateUrl();
  // A move previewed on this thread paints at once; anything else paints next frame.
  if (!(local.ready && view.ready && view.report) || NO_PREVIEW_KEYS.has(key) || REPLAY_KEYS.has(key)) scheduleRender();
  if (REPLAY_KEYS.has(key)) { if (!view.running) replay().catch(sayEngineError); return; }
  if (BEAM_KEYS.has(key)) { scheduleBeam(); return; }
  if (NO_PREVIEW_KEYS.has(key)) return;
  doPreview(startedAt);
}

/**
 * Ban or unban a token.
 * @param {number} id
 */
export function toggleBan(id) {
  const s = state.settings;
  s.banned = s.banned.includes(id) ? s.banned.filter((x) => x !== id) : [...s.banned, id];
  afterListChange();
}

/**
 * Add (or remove) the chosen bias on a token.
 * @param {number} id
 */
export function toggleBias(id) {
  const s = state.settings;
  s.logit_bias = s.logit_bias.some(([i]) => i === id)
    ? s.logit_bias.filter(([i]) => i !== id)
    : [...s.logit_bias, [id, s.bias_amount]];
  afterListChange();
}

function afterListChange() {
  updateUrl();
  refreshChips();
  doPreview(performance.now());
}

/** Token text for an id, from whatever the reports have shown. */
function displayOf(id) {
  const lists = [view.distribution?.raw_top ?? [], view.report?.generated ?? [], view.report?.prompt_tokens ?? []];
  for (const list of lists) { const t = list.find((x) => x.id === id); if (t) return t.display; }
  return `#${id}`;
}

/** Repaint the chips of banned and biased tokens. */
export function refreshChips() {
  const box = $("#ctl-chips");
  if (box) renderChips(box, { banned: state.settings.banned, bias: state.settings.logit_bias, name: displayOf });
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
