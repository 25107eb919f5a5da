// The compare panel's engine side: two configurations, A and B, on the same
// model. For the next token, both run on the same raw logits on this thread
// (the page's Previewer: Previewer.compare), before every paint of the panel,
// so a slider move shows in the frame it is painted in; runs of continuations
// from the same prompt with the same seeds go to the worker, which yields
// between tokens (compare_start / compare_next / compare_finish, as the beam
// search) so the page stays answered and Cancel gets in.

import { client, local } from "./link.js";
import { readSide } from "./configs.js";
import * as store from "../state/store.js";
import { state, view, engineSettings, currentPrompt } from "../state/store.js";
import { beforeEachPaint, scheduleComparePaint } from "../panels/frame.js";

/** The most runs of each configuration one request asks for, and the longest continuation. */
export const MAX_COMPARE_RUNS = 64;
export const MAX_COMPARE_NEW = 256;

/**
 * Both sides read against the settings in force.
 * @returns {{ a: import("./configs.js").SideRead, b: import("./configs.js").SideRead }}
 */
function readSides() {
  const base = engineSettings();
  return { a: readSide(state.compare.a, base), b: readSide(state.compare.b, base) };
}

/**
 * Why the sides cannot be compared (a side refused, or still being read), or null.
 * @param {{ a: import("./configs.js").SideRead, b: import("./configs.js").SideRead }} sides
 * @returns {string|null}
 */
function sidesProblem(sides) {
  for (const key of /** @type {const} */ (["a", "b"])) {
    const s = sides[key];
    if (s.problem) return `${key.toUpperCase()}: ${s.problem}`;
    if (s.pending || !s.settings) return "reading the configurations…";
  }
  return null;
}

/**
 * What runs of continuations are computed from: both sides' settings and the prompt.
 * @param {{ a: import("./configs.js").SideRead, b: import("./configs.js").SideRead }} sides
 * @param {string} prompt
 */
const runKey = (sides, prompt) => JSON.stringify([sides.a.settings, sides.b.settings, prompt]);

/** What the last comparison was computed from: the previewer's state and both settings. */
let lastKey = "";

/**
 * Before a paint of the panels: the sides read and, when anything they
 * depend on moved (the pending logits, either side's settings), the next
 * token under both, into the store. Nothing while the panel is closed.
 */
function compareBeforePaint() {
  if (!state.panels.includes("compare")) { lastKey = ""; return; }
  const sides = readSides();
  store.takeCompareSides(sides, runKey(sides, currentPrompt()));
  const problem = sidesProblem(sides) ??
    (!view.ready || !view.report ? "waiting for the model…" :
      !local.ready ? "waiting for the engine on this page's thread…" :
        typeof local.previewer?.compare !== "function" ? "this engine build has no Previewer.compare: rebuild www/pkg with pkg-scripts/build" : null);
  if (problem) { lastKey = ""; store.takeCompareStep(null, problem); return; }
  const key = `${local.version}\n${JSON.stringify(sides.a.settings)}\n${JSON.stringify(sides.b.settings)}`;
  if (key === lastKey) return;
  lastKey = key;
  try {
    store.takeCompareStep(local.compare(sides.a.settings, sides.b.settings), null);
  } catch (err) {
    store.takeCompareStep(null, err instanceof Error ? err.message : String(err));
  }
}

/** The panel follows every paint (called once, at boot). */
export function followCompare() {
  beforeEachPaint(compareBeforePaint);
}

/**
 * Generate `runs` continuations of the prompt under each configuration, with
 * the same seeds, in the worker; the panel shows the progress, then the
 * statistics. A later request that uses the model (a Step, a Run, a beam
 * search, a new prompt) cancels it, as Cancel does.
 * @param {number} runs 1 … MAX_COMPARE_RUNS
 * @param {number} maxNew tokens per continuation, 1 … MAX_COMPARE_NEW
 */
export async function runCompare(runs, maxNew) {
  if (!view.ready || view.running || view.compare.run.busy) return;
  const sides = readSides();
  const problem = sidesProblem(sides);
  const prompt = currentPrompt();
  store.compareRunStarted({ runs, maxNew, prompt, labels: { a: sides.a.label, b: sides.b.label }, key: runKey(sides, prompt) });
  if (problem) { store.compareRunEnded(null, problem); scheduleComparePaint(); return; }
  scheduleComparePaint();
  try {
    const msg = await client.request("compare", { prompt, settings_a: sides.a.settings, settings_b: sides.b.settings, runs, max_new: maxNew },
      (p) => { store.compareRunProgressed(p); scheduleComparePaint(); });
    if (msg.cancelled) store.compareRunEnded(null, msg.why ?? "cancelled");
    else store.compareRunEnded(msg.result, null);
  } catch (err) {
    store.compareRunEnded(null, err instanceof Error ? err.message : String(err));
  }
  scheduleComparePaint();
}

/** Cancel the runs in progress (the worker answers the runs' request with `cancelled`). */
export function cancelCompare() {
  if (!view.compare.run.busy) return;
  client.request("compare_cancel").catch(() => { /* the runs' own request says how they ended */ });
}
