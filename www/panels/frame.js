//# allFunctionsCalledOnLoad
// Frame scheduling: every change asks for a repaint and the panels are
// painted once per animation frame (paint.js, which reads the store); a
// slider move answered on this thread is painted at once, in its input task,
// within a budget per frame. The scheduler decides when, never what: a
// preview's numbers are computed by the work its caller hands over.

import { view, previewPainted } from "../state/store.js";
import { emit } from "../state/events.js";
import { takesEveryCore } from "../state/threads.js";
import { paintAll, paintBeam, paintCompare } from "./paint.js";

let renderQueued = false;
/**
 * A move's preview whose paint was put off to the next frame: its work (the
 * engine's, handed over by engine/generation.js) runs just before that paint,
 * once for all the moves of the frame. @type {(() => void)|null}
 */
let previewWork = null;

/**
 * During a run the panels are painted at most this often (ms). A full paint
 * of the default page costs the browser about 30 ms of CPU over its threads
 * (script, style, layout, paint, raster, compositing; traced in headless
 * Chromium on SmolLM2), so painting every token of a 30-60 tokens/s run took
 * a core from the worker on a 2-core machine: the page's Run decoded at 0.69×
 * the engine alone (pkg-scripts/bench-page-run.mjs). Twenty paints a second
 * still read as live; a Step, a slider move and a run's last token paint at
 * once.
 */
const RUN_PAINT_EVERY_MS = 50;
/**
 * The same where the engine's threads take every core: each paint's CPU
 * (about 28 ms over the browser's threads in a 2-thread Gemma 3 Run on 2
 * cores, traced: the page's thread 16, raster 5, compositing and display 7)
 * then comes out of the engine's, and the engine's helper stands aside
 * while the page paints (engine/stand-aside.js). Five paints a second still
 * show the text and the panels moving. Measured in headless Chromium on 2
 * cores, 2 threads, three alternating rounds each (tokens/s):
 * - Gemma 3, 96 tokens: 31.8-35.5 at 100 ms, 34.3-37.0 at 200, 35.5-35.7
 *   at 300;
 * - SmolLM2, 128 tokens: 75.2-79.5 at 100 ms, 80.4-80.5 at 200.
 */
export const RUN_PAINT_EVERY_MS_ALL_CORES = 200;
/** When the panels were last painted (performance.now()). */
let lastPaintAt = -Infinity;

/** A paint a run's interval put off (its timer), or 0. */
let putOff = 0;

/**
 * Repaint on the next animation frame (many updates, one paint); during a
 * run, not sooner than RUN_PAINT_EVERY_MS (or RUN_PAINT_EVERY_MS_ALL_CORES)
 * after the last. A paint put off that way comes at the next frame once the
 * run has ended: its last token, and the Run button back, show at once
 * rather than up to an interval later.
 */
export function scheduleRender() {
  const every = takesEveryCore(view.threads) ? RUN_PAINT_EVERY_MS_ALL_CORES : RUN_PAINT_EVERY_MS;
  const wait = view.running ? lastPaintAt + every - performance.now() : 0;
  if (renderQueued) {
    if (putOff && wait <= 0) { clearTimeout(putOff); putOff = 0; paintAtNextFrame(); }
    return;
  }
  renderQueued = true;
  if (wait > 0) putOff = setTimeout(() => { putOff = 0; paintAtNextFrame(); }, wait);
  else paintAtNextFrame();
}

function paintAtNextFrame() {
  // A synchronous paint in between has done this frame's work already.
  requestAnimationFrame(() => { if (renderQueued) renderAll(); });
}

let beamPaintQueued = false;
/**
 * Repaint only the beam panel on the next frame (a search's start, progress
 * and result change nothing else): a full repaint for each of those kept the
 * page's thread busy while a search ran just after a load, in the way of the
 * first slider move (engine/generation.js BEAM_DELAY_MS has the figures).
 */
export function scheduleBeamPaint() {
  if (beamPaintQueued || renderQueued) return;
  beamPaintQueued = true;
  requestAnimationFrame(() => { beamPaintQueued = false; if (!renderQueued) paintBeam(); });
}

let comparePaintQueued = false;
/** Repaint only the compare panel on the next frame (its runs' progress changes nothing else). */
export function scheduleComparePaint() {
  if (comparePaintQueued || renderQueued) return;
  comparePaintQueued = true;
  requestAnimationFrame(() => { comparePaintQueued = false; if (!renderQueued) paintCompare(); });
}

/**
 * Work that must run before every paint of the panels, handed over by the
 * engine's side (the compare panel's answer for the settings in force, which
 * the move being painted may have changed): each computes what it needs, once
 * per paint, and puts it in the store. @type {(() => void)[]}
 */
const beforePaint = [];

/** @param {() => void} work run before each paint of the panels, after a waiting preview */
export function beforeEachPaint(work) {
  beforePaint.push(work);
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
 * A preview: run `work` (it puts the preview in the store) and paint now, in
 * the current (input) task, unless this frame has already spent its budget
 * on earlier moves; then `work` and the paint wait for the next frame, and a
 * later move's work replaces this one's.
 * @param {() => void} work
 */
export function paintPreviewNow(work) {
  previewWork = work;
  // Only the panels a preview changes, unless a full repaint is due anyway.
  paintWithinBudget({ previewOnly: !renderQueued });
}

/** A report is newer than a preview still waiting for its frame: that preview is dropped. */
export function dropWaitingPreview() {
  previewWork = null;
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
 * A waiting preview's work, then the paint, then the news that the DOM holds
 * new numbers.
 * @param {{ previewOnly?: boolean }} [opts] see paint.js paintAll
 */
export function renderAll(opts = {}) {
  renderQueued = false;
  clearTimeout(putOff);
  putOff = 0;
  lastPaintAt = performance.now();
  if (previewWork) { const work = previewWork; previewWork = null; work(); }
  for (const work of beforePaint) work();
  paintAll(opts);
  const preview = view.previewShown;
  previewPainted();
  emit("painted", { preview, ready: view.ready && !!view.report });
}
