// Frame scheduling: every change asks for a repaint and the panels are
// painted once per animation frame from `view`; a slider move answered on
// this thread is painted at once, in its input task, within a budget per frame.

import { $, state, view } from "../state/store.js";
import { emit } from "../state/events.js";
import { renderOutput } from "../render/output.js";
import { renderDist } from "../render/dist.js";
import { renderRules } from "../render/rules.js";
import { renderEntropy } from "../render/entropy.js";
import { renderKv } from "../render/kv.js";
import { renderBeam } from "../render/beam.js";
import { renderTrain } from "../render/train.js";
import { renderModelFacts } from "../render/model-facts.js";
import { renderScore } from "../render/score.js";
import { renderSpeed } from "../render/speed.js";
import { setText } from "../render/dom.js";

let renderQueued = false;
/** Run before each paint (the engine module brings a waiting local preview into `view`). @type {(() => void)[]} */
const beforePaint = [];

/** @param {() => void} fn */
export function onBeforePaint(fn) {
  beforePaint.push(fn);
}

/** Repaint on the next animation frame (many updates, one paint). */
export function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  // A synchronous renderAll in between has done this frame's work already.
  requestAnimationFrame(() => { if (renderQueued) renderAll(); });
}

let beamPaintQueued = false;
/**
 * Repaint only the beam panel on the next frame (a search's start, progress
 * and result change nothing else): a full repaint for each of those kept the
 * page's thread busy while a search ran just after a load, in the way of the
 * first slider move (engine.js BEAM_DELAY_MS has the figures).
 */
export function scheduleBeamPaint() {
  if (beamPaintQueued || renderQueued) return;
  beamPaintQueued = true;
  requestAnimationFrame(() => { beamPaintQueued = false; if (!renderQueued) paintBeam(); });
}

/** The beam panel from `view`, when it is shown. */
function paintBeam() {
  if (!state.panels.includes("beam")) return;
  renderBeam($("#p-beam .body"), { beam: view.beam, busy: view.beamBusy, progress: view.beamProgress, estimateMs: view.beamEstimateMs });
}

/** Milliseconds of synchronous preview painting in the current frame. */
let frameWorkMs = 0;
let frameWorkResetQueued = false;
/**
 * Past this much synchronous painting in one frame, further moves in that
 * frame are coalesced into one paint at the next frame (a keyboard repeat or
 * a dragged slider can fire several inputs per frame on a large vocabulary).
 */
const SYNC_PAINT_BUDGET_MS = 8;

/**
 * Paint a preview now, in the current (input) task, unless this frame has
 * already spent its budget on earlier moves; then at the next frame.
 */
export function paintPreviewNow() {
  // Only the panels a preview changes, unless a full repaint is due anyway.
  paintWithinBudget({ previewOnly: !renderQueued });
}

/**
 * Paint everything now, in the current task (a Step's reply): the DOM holds
 * the new token before the next frame starts, so that frame shows it. Waiting
 * for a requestAnimationFrame instead cost a whole frame more (measured with
 * pkg-scripts/bench-page.mjs: a reply arriving just after a frame began waited
 * for the next one's callbacks, and the token showed one frame after that).
 * Within the same per-frame budget as previews, so a burst of replies still
 * coalesces into one paint per frame.
 */
export function paintNow() {
  paintWithinBudget({ previewOnly: false });
}

/** @param {{ previewOnly: boolean }} opts */
function paintWithinBudget(opts) {
  if (frameWorkMs > SYNC_PAINT_BUDGET_MS) { scheduleRender(); return; }
  const t0 = performance.now();
  renderAll(opts);
  frameWorkMs += performance.now() - t0;
  if (!frameWorkResetQueued) {
    frameWorkResetQueued = true;
    requestAnimationFrame(() => { frameWorkMs = 0; frameWorkResetQueued = false; });
  }
}

/**
 * Paint every visible panel from `view`.
 * @param {{ previewOnly?: boolean }} [opts] previewOnly: only the panels a
 *   preview changes (distribution, rules, entropy); the output, KV cache and
 *   beam panels draw from the report and the beam search, which it leaves alone
 */
export function renderAll({ previewOnly = false } = {}) {
  renderQueued = false;
  for (const fn of beforePaint) fn();
  const shown = new Set(state.panels);
  const d = view.distribution;
  const r = view.report;
  if (shown.has("output") && !previewOnly) {
    renderOutput($("#p-output .body"), {
      promptTokens: r?.prompt_tokens ?? [], generated: r?.generated ?? [],
      stop: r?.stop ?? (view.userStopped ? "user" : null), running: view.running,
    });
    renderSpeed($("#speed"), view.speed);
  }
  if (shown.has("dist")) {
    renderDist($("#p-dist .body"), {
      distribution: d, chosen: view.chosen,
      banned: new Set(state.settings.banned), bias: new Map(state.settings.logit_bias),
    });
  }
  if (shown.has("rules")) renderRules($("#p-rules .body"), { distribution: d, settings: state.settings, generated: r?.generated ?? [], vocabSize: view.info?.vocab_size ?? null });
  if (shown.has("entropy")) {
    renderEntropy($("#p-entropy .body"), { distribution: d, temperature: state.settings.temperature,
      vocabSize: view.info?.vocab_size ?? 2, settings: state.settings });
  }
  if (shown.has("kv") && !previewOnly) {
    renderKv($("#p-kv .body"), { kv: r?.kv ?? null, counters: r?.counters ?? null,
      cacheCheck: r?.cache_check ?? null, useCache: state.settings.use_cache });
  }
  if (!previewOnly) paintBeam();
  if (shown.has("score") && !previewOnly) {
    renderScore($("#p-score .body"), { score: view.score, busy: view.scoreBusy, selected: view.scoreSelected });
  }
  if (state.model === "bigram-abc" && !previewOnly) renderTrain($("#train-result"), { result: view.train, busy: view.trainBusy });
  paintButtons();
  renderModelFacts($("#model-facts"), view.info);

  const preview = view.previewShown;
  view.previewShown = false;
  document.body.dataset.ready = String(view.ready && !!view.report);
  emit("painted", { preview, ready: view.ready && !!view.report });
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
  btn("#btn-back").disabled ||= !(r?.generated?.length);
  btn("#btn-score").disabled = !view.ready || view.scoreBusy;
  btn("#btn-score-output").disabled = !view.ready || view.scoreBusy || !r;
}
