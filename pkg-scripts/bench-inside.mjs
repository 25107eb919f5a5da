// What the inside panel costs a generation: in headless Chromium, on one page
// (one compiled engine, one model load), Run generates the same tokens with
// the inside panel closed and open, in alternating rounds, each from Reset.
// Per round: the worker's time per token (decode step + its report, with the
// attention weights and the logit lens when open: bench/bench.js's
// __ntpSteps), the engine call's part of it (__ntpStepsEngine) and the run's
// tokens per second (Run pressed -> the run's last token shown). The figure
// to watch (the goal: at most 2) is the ratio open / closed of the mean step:
// during a run the worker reads the lens a few times a second (worker.js
// RUN_LENS_EVERY_MS), so a median would hide those steps; the runs' tokens/s
// give the ratio from the wall clock. Speed is measured here, never asserted.
//
// Usage: node pkg-scripts/bench-inside.mjs [model] [tokens] [--rounds=N] [--json]
//   model: default smollm2-135m; tokens: per run (default 32); rounds: closed/open pairs (default 2)
//   (after pkg-scripts/build)

import { startServer, launchBrowser, openPage, waitForReady } from "../tests/e2e/harness.mjs";
import { positionals, intOption, say, emitJson, describeMs, stats, timedRun } from "./bench-common.mjs";

const [model = "smollm2-135m", tokensArg = "32"] = positionals();
const tokens = Number(tokensArg);
const rounds = intOption("rounds", 2, 1);
if (!Number.isInteger(tokens) || tokens < 2) {
  console.error("usage: node pkg-scripts/bench-inside.mjs [model] [tokens >= 2] [--rounds=N] [--json]");
  process.exit(2);
}

/** Both modes' panels: the default page's, with the inside panel or without it. */
const PANELS = "output,dist,rules,entropy,kv,controls,model";
const figures = { model, tokens, rounds, closed: { step: [], engine: [], tokens_per_s: [] }, open: { step: [], engine: [], tokens_per_s: [] }, ratio: null, problems: [] };
const server = await startServer();
const browser = await launchBrowser();
try {
  // Greedy and no stop string: every run generates the same `tokens` tokens.
  const query = `model=${encodeURIComponent(model)}&panels=${PANELS}&temperature=0&nostop=1&max_new=${tokens}&tour=0&bench=1`;
  const { page, errors } = await openPage(browser, new URL(`index.html?${query}`, server.url).href);
  await waitForReady(page, 300000);
  await timedRun(page, tokens); // the first run warms the engine's code paths up; not counted
  for (let round = 1; round <= rounds; round++) {
    for (const mode of /** @type {const} */ (["closed", "open"])) {
      await setInside(page, mode === "open");
      const { step, engine, perSecond } = await timedRun(page, tokens);
      figures[mode].step.push(...step);
      figures[mode].engine.push(...engine);
      figures[mode].tokens_per_s.push(perSecond);
      say(`round ${round}, inside ${mode}: ${tokens} tokens at ${perSecond.toFixed(1)} tokens/s; worker's time per token ${describeMs(step)}; ` +
        `of which the engine call ${describeMs(engine)}`);
    }
  }
  figures.problems.push(...errors);
  await page.close();
} finally {
  await browser.close();
  await server.close();
}
const mean = (/** @type {number[]} */ xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const closed = { ...stats(figures.closed.step), mean: mean(figures.closed.step) };
const open = { ...stats(figures.open.step), mean: mean(figures.open.step) };
figures.ratio = closed.mean && open.mean ? open.mean / closed.mean : null;
const perSecond = { closed: mean(figures.closed.tokens_per_s), open: mean(figures.open.tokens_per_s) };
figures.tokens_per_s_ratio = perSecond.closed && perSecond.open ? perSecond.closed / perSecond.open : null;
say(`${model}, Run decode, worker's time per token: inside closed ${describeMs(figures.closed.step)}, mean ${closed.mean?.toFixed(1)} ms; ` +
  `open ${describeMs(figures.open.step)}, mean ${open.mean?.toFixed(1)} ms`);
say(`  of which the engine call (Playground.step): closed ${describeMs(figures.closed.engine)}; open ${describeMs(figures.open.engine)}`);
say(`open / closed, mean step: ${figures.ratio?.toFixed(2) ?? "–"}; tokens/s closed / open: ${figures.tokens_per_s_ratio?.toFixed(2) ?? "–"} (goal: at most 2)`);
emitJson({ ...figures, closed: { ...figures.closed, step: closed, engine: stats(figures.closed.engine) }, open: { ...figures.open, step: open, engine: stats(figures.open.engine) } });

/**
 * Open or close the inside panel with its switch, and wait until the engine
 * has been told (an open panel shows the inside of the pending position).
 * @param {import("playwright-core").Page} page
 * @param {boolean} on
 */
async function setInside(page, on) {
  if ((await page.isChecked("#show-inside")) !== on) await page.click("#show-inside");
  if (on) await page.waitForSelector("#p-inside .body[data-state=shown]", { timeout: 60000 });
}
