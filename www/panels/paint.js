//# allFunctionsCalledOnLoad
// The painter: every visible panel drawn from the store (`state`, `view`),
// which it only reads. When it paints is the frame scheduler's (frame.js).

import { state, view } from "../state/store.js";
import { renderOutput } from "../render/output.js";
import { renderDist } from "../render/dist.js";
import { renderRules } from "../render/rules.js";
import { renderEntropy } from "../render/entropy.js";
import { renderKv } from "../render/kv.js";
import { renderBeam } from "../render/beam.js";
import { renderTrain } from "../render/train.js";
import { renderModelFacts } from "../render/model-facts.js";
import { renderSpeed } from "../render/speed.js";
import { renderChips } from "../render/chips.js";
import { $, setText } from "../render/dom.js";

/**
 * The painters of the panels that load after the first distribution
 * (later.js): null until they have, and the page is not ready before.
 * @type {{ renderInside: Function|null, renderScore: Function|null, renderCompare: Function|null }}
 */
const later = { renderInside: null, renderScore: null, renderCompare: null };
let laterWired = false;

/**
 * The later panels' painters, once their modules are in and wired.
 * @param {{ renderInside: Function, renderScore: Function, renderCompare: Function }} painters
 */
export function setLaterRenderers(painters) {
  Object.assign(later, painters);
  laterWired = true;
}

/** The beam panel, when it is shown. */
export function paintBeam() {
  if (!state.panels.includes("beam")) return;
  renderBeam($("#p-beam .body"), { beam: view.beam, busy: view.beamBusy, progress: view.beamProgress, estimateMs: view.beamEstimateMs });
}

/** The inside panel, when it is shown (its own layer and head moves repaint only it). */
export function paintInside() {
  if (!state.panels.includes("inside") || !later.renderInside) return;
  later.renderInside($("#p-inside .body"), { inside: view.inside, lens: view.insideLens, info: view.info,
    tokens: [...view.transcript.promptTokens, ...view.transcript.generated], focus: view.insideFocus, hover: view.insideHover });
}

/** The compare panel, when it is shown (its runs' progress repaints only it). */
export function paintCompare() {
  if (!state.panels.includes("compare") || !later.renderCompare) return;
  later.renderCompare($("#p-compare"), { compare: view.compare, sides: state.compare, ready: view.ready, running: view.running });
}

/**
 * Paint every visible panel.
 * @param {{ previewOnly?: boolean }} [opts] previewOnly: only the panels a
 *   preview changes (distribution, rules, entropy); the output, KV cache and
 *   beam panels draw from the report and the beam search, which it leaves alone
 */
export function paintAll({ previewOnly = false } = {}) {
  const shown = new Set(state.panels);
  const d = view.distribution;
  const r = view.report;
  if (shown.has("output") && !previewOnly) {
    renderOutput($("#p-output .body"), {
      promptTokens: view.transcript.promptTokens, generated: view.transcript.generated,
      stop: r?.stop ?? (view.userStopped ? "user" : null), running: view.running,
    });
    renderSpeed($("#speed"), view.speed, view.threads);
  }
  if (shown.has("dist")) {
    renderDist($("#p-dist .body"), {
      distribution: d, chosen: view.chosen,
      banned: new Set(state.settings.banned), bias: new Map(state.settings.logit_bias),
    });
  }
  if (shown.has("rules")) renderRules($("#p-rules .body"), { distribution: d, settings: state.settings, generated: view.transcript.generated, vocabSize: view.info?.vocab_size ?? null });
  if (shown.has("entropy")) {
    renderEntropy($("#p-entropy .body"), { distribution: d, temperature: state.settings.temperature,
      vocabSize: view.info?.vocab_size ?? 2, settings: state.settings });
  }
  if (shown.has("kv") && !previewOnly) {
    renderKv($("#p-kv .body"), { kv: r?.kv ?? null, counters: r?.counters ?? null,
      cacheCheck: r?.cache_check ?? null, useCache: state.settings.use_cache, window: view.info?.sliding_window ?? null });
  }
  if (shown.has("inside") && !previewOnly) paintInside();
  if (shown.has("compare")) paintCompare();
  if (!previewOnly) paintBeam();
  if (shown.has("score") && !previewOnly && later.renderScore) {
    later.renderScore($("#p-score .body"), { score: view.score, busy: view.scoreBusy, selected: view.scoreSelected });
  }
  if (state.model === "bigram-abc" && !previewOnly) renderTrain($("#train-result"), { result: view.train, busy: view.trainBusy });
  paintButtons();
  renderModelFacts($("#model-facts"), view.info);
  document.body.dataset.ready = String(view.ready && !!view.report && laterWired);
}

/**
 * The chips of banned and biased tokens, named by whatever the reports have
 * shown (a ban from a link is named once its token has appeared).
 */
export function paintChips() {
  const box = $("#ctl-chips");
  if (box) renderChips(box, { banned: state.settings.banned, bias: state.settings.logit_bias, name: displayOf });
}

/** Token text for an id, from whatever the reports have shown. */
function displayOf(id) {
  const lists = [view.distribution?.raw_top ?? [], view.transcript.generated, view.transcript.promptTokens];
  for (const list of lists) { const t = list.find((x) => x.id === id); if (t) return t.display; }
  return `#${id}`;
}

/** What the generation buttons allow now. */
function paintButtons() {
  const r = view.report;
  const btn = (/** @type {string} */ id) => /** @type {HTMLButtonElement} */ ($(id));
  setText(btn("#btn-run"), view.running ? "Stop" : "Run");
  btn("#btn-run").setAttribute("aria-pressed", String(view.running));
  for (const id of ["#btn-step", "#btn-back"]) btn(id).disabled = !view.ready || view.running;
  // After a stop condition the engine refuses to go on: only Step back
  // (or clicking a token) and Reset make sense.
  const stopped = !!r?.stop;
  if (stopped) btn("#btn-step").disabled = true;
  btn("#btn-run").disabled = (!view.ready || stopped) && !view.running;
  // Reset stays available after a crash: it reloads the model.
  btn("#btn-reset").disabled = view.loading || view.running;
  btn("#btn-back").disabled ||= !view.transcript.generated.length;
  btn("#btn-score").disabled = !view.ready || view.scoreBusy;
  btn("#btn-score-output").disabled = !view.ready || view.scoreBusy || !r;
}
