// Browser benchmark of the page: in headless Chromium, with the real wasm
// engine, it measures
//   - keyboard slider move -> repaint: the page's own __ntpPerf record, from the
//     input event's timeStamp to the first animation-frame callback after the
//     DOM holds the new numbers (the frame that paints them). Moves are
//     ArrowRight/ArrowLeft presses on the focused temperature slider, one at a
//     time (each waits for its record). The first move after the page is
//     ready is reported apart from the later ones; with --loads=N the page is
//     opened N times, each in a freshly launched browser (so no load reuses
//     the code another compiled), and the first moves of every load are
//     listed, the later ones pooled.
//   - the same slider measure at V = 49,152 (bench only, nothing of it ships):
//     the page's own Previewer is given 49,152 synthetic token names, seeded
//     random logits and a 64-token history (bench/bench.js's
//     withSyntheticVocabulary); every panel is the real one. (On the real
//     SmolLM2, open the page with model smollm2-135m instead.)
//   - for that vocabulary also the engine alone: a separate wasm Previewer in
//     the page, per move preview() alone, and preview() + the distribution,
//     rules and entropy panels painted into a scratch copy + a forced layout
//     (both synchronous).
//   Every figure runs with top-k 50, top-p 0.9, min-p 0.02 and repetition
//   penalty 1.2 on (set in the page's URL), temperature moving.
//   Also the page's own work per move: event timeStamp -> the page's input
//   handler done (the DOM holds the new numbers).
//   - the browser's floor for that measure: the same key presses on a scratch
//     input whose handler only changes one text node, timed the same way
//     (event timeStamp -> first animation-frame callback after the change).
//   - one Step click -> the output panel shows one more token (a model call and a repaint).
// The floor, the V = 49,152 figures, the steps and the beam search are
// measured on the last load only. Speed targets live in BENCHMARKS.md, never
// in the tests.
//
// Usage: node pkg-scripts/bench-page.mjs [model] [moves] [steps] [bigMoves] [--loads=N] [--no-floor] [--no-beam] [--panels=LIST] [--json]
//   --panels=LIST: the page's panels parameter (e.g. without beam, to see what its search costs the first move)
//   (after pkg-scripts/build)
//   bigMoves: moves of the V = 49,152 measurement (0 skips it; default 60)
//   --json: the figures as one JSON line on stdout (the readable lines go to stderr)

import { startServer, launchBrowser, openPage, waitForReady } from "../tests/e2e/harness.mjs";
import { positionals, intOption, option, say, emitJson, describeMs, stats, timedSteps } from "./bench-common.mjs";

const [model = "logits10", movesArg = "200", stepsArg = "20", bigMovesArg = "60"] = positionals();
const moves = Number(movesArg);
const steps = Number(stepsArg);
const bigMoves = Number(bigMovesArg);
const loads = intOption("loads", 1, 1);
const withFloor = !process.argv.includes("--no-floor");
const withBeam = !process.argv.includes("--no-beam");
if (!Number.isInteger(moves) || moves < 2 || !Number.isInteger(steps) || steps < 0 || !Number.isInteger(bigMoves) || bigMoves < 0) {
  console.error("usage: node pkg-scripts/bench-page.mjs [model] [moves >= 2] [steps >= 0] [bigMoves >= 0] [--loads=N] [--no-floor] [--no-beam] [--panels=LIST] [--json]");
  process.exit(2);
}
const BIG_VOCAB = 49152;

const figures = { model, loads, moves, first: { frame: [], painted: [], work: [] }, later: null, floor: null, big: null, steps: null, beam_ms: null, problems: [] };
const later = { frame: [], painted: [], work: [] };
const server = await startServer();
/** A fresh browser per load (launched below), so no load reuses another's compiled code. */
let browser = null;
try {
  // Every rule on, as in the synthetic measurement below (the same settings for every figure).
  // bench=1: the page loads bench.js, which keeps the records read here.
  const panels = option("panels");
  const query = `model=${encodeURIComponent(model)}${panels ? `&panels=${encodeURIComponent(panels)}` : ""}&top_k=50&top_p=0.9&min_p=0.02&repetition_penalty=1.2&bench=1`;
  for (let load = 1; load <= loads; load++) {
    await browser?.close();
    browser = await launchBrowser();
    const { page, errors } = await openPage(browser, new URL(`index.html?${query}`, server.url).href);
    await waitForReady(page, 300000);

    // The main-thread previewer becomes ready shortly after the model; measure
    // the page as a student meets it a moment after loading.
    const local = await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 60000 })
      .then(() => true, () => false);
    const { paints, painted, work } = await sliderMoves(page, moves);
    figures.first.frame.push(paints[0]);
    figures.first.painted.push(painted[0]);
    figures.first.work.push(work[0]);
    later.frame.push(...paints.slice(1));
    later.painted.push(...painted.slice(1));
    later.work.push(...work.slice(1));
    const source = await page.evaluate(() => document.body.dataset.previewSource);
    figures.vocab = await page.evaluate(() => document.querySelector("#model-facts").textContent.split(" · ")[1]);
    figures.preview_source = source;
    say(`load ${load}/${loads}: first slider move after the page is ready -> frame ${paints[0].toFixed(1)} ms ` +
      `(painted ${painted[0].toFixed(1)} ms, page work ${work[0].toFixed(1)} ms); the ${paints.length - 1} later moves -> frame: ${describeMs(paints.slice(1))}`);
    if (load < loads) {
      figures.problems.push(...errors);
      await page.close();
      continue;
    }

    say(`keyboard slider move -> frame with the new paint (${model}, V = ${figures.vocab}, `
      + `preview on the ${source === "local" ? "page's thread" : "worker"}${local ? "" : "; main-thread previewer never became ready"}), `
      + `moves after the first, ${loads} load(s): ${describeMs(later.frame)}`);
    say(`  to that frame painted (first task after its rendering): ${describeMs(later.painted)}`);
    say(`  of which the page's work (event -> DOM updated, in the input task): ${describeMs(later.work)}`);
    say(`first move after load, each load -> frame: ${figures.first.frame.map((x) => x.toFixed(1)).join(", ")} ms; ` +
      `painted: ${figures.first.painted.map((x) => x.toFixed(1)).join(", ")} ms`);
    if (withFloor) {
      const floor = await measureFloor(page, moves);
      say(`floor: key press -> frame, handler changes one text node (same page, same method): ${describeMs(floor.frame)}`);
      say(`  to that frame painted: ${describeMs(floor.painted)}`);
      figures.floor = { frame: stats(floor.frame), painted: stats(floor.painted) };
    }

    if (bigMoves > 0) {
      await page.evaluate(defineSyntheticState);
      const big = await page.evaluate(measureBigVocab, { vocab: BIG_VOCAB, moves: bigMoves });
      say(`V = ${BIG_VOCAB} (synthetic, bench only), preview() alone: ${describeMs(big.preview)}`);
      say(`V = ${BIG_VOCAB} (synthetic, bench only), rules + render (preview() + dist, rules, entropy panels, synchronous): ${describeMs(big.sync)}`);
      // The same slider, the same clock as the first figure, with the page's
      // Previewer holding the synthetic 49,152-token state instead of the model's.
      await page.evaluate(installSyntheticState, { vocab: BIG_VOCAB });
      const synthetic = await sliderMoves(page, bigMoves);
      say(`keyboard slider move -> frame with the new paint, V = ${BIG_VOCAB} (synthetic logits in the page's Previewer, every panel real): ${describeMs(synthetic.paints)}`);
      say(`  to that frame painted: ${describeMs(synthetic.painted)}`);
      say(`  of which the page's work (event -> DOM updated, in the input task): ${describeMs(synthetic.work)}`);
      figures.big = { preview: stats(big.preview), sync: stats(big.sync), frame: stats(synthetic.paints), painted: stats(synthetic.painted), work: stats(synthetic.work) };
    }

    // The generation may stop (end of text, a stop string, the length limit).
    const { times: stepTimes, stopped } = await timedSteps(page, steps);
    if (stopped) say(`${stopped}; stopping the step benchmark`);
    if (stepTimes.length) {
      const worker = (await page.evaluate(() => window.__ntpSteps.slice())).slice(-stepTimes.length);
      say(`step click -> token shown (${model}): ${describeMs(stepTimes)}`);
      say(`  of which the worker's time (decode step + report): ${describeMs(worker)}`);
      figures.steps = { click_to_token: stats(stepTimes), worker: stats(worker) };
    }
    if (withBeam) {
      // One beam search from here, timed (the panel's Search button on a slow model).
      await page.evaluate(() => { window.__ntpBeams.length = 0; });
      const search = await page.$("#p-beam [data-action=beam-search]:not([hidden])");
      if (search) await search.click();
      try {
        await page.waitForFunction(() => window.__ntpBeams.length > 0, null, { timeout: 120000 });
        const settings = await page.evaluate(() => [document.querySelector("#ctl-beams").value, document.querySelector("#ctl-beam_len").value]);
        figures.beam_ms = await page.evaluate(() => window.__ntpBeams[0]);
        say(`beam search, ${settings[0]} beams × ${settings[1]} tokens (${model}): ${figures.beam_ms.toFixed(0)} ms`);
      } catch {
        say("beam search: no search ran (beam panel hidden?)");
      }
    }
    figures.problems.push(...errors);
    if (errors.length) say(`page reported problems:\n  ${errors.join("\n  ")}`);
    await page.close();
  }
} finally {
  await browser?.close();
  await server.close();
}
figures.later = { frame: stats(later.frame), painted: stats(later.painted), work: stats(later.work) };
emitJson(figures);

/**
 * Keyboard moves on the temperature slider, alternating up and down so every
 * move changes the distribution, one at a time (the next waits for the
 * page's paint record). Returns the page's input -> frame records and, from
 * a listener added after the page's own, input -> page handler done.
 * @param {import("playwright-core").Page} page
 * @param {number} moves
 * @returns {Promise<{ paints: number[], painted: number[], work: number[] }>}
 */
async function sliderMoves(page, moves) {
  await page.evaluate(() => {
    window.__ntpPerf.length = 0;
    window.__ntpPerfPainted.length = 0;
    window.__benchWork = [];
    if (!window.__benchListening) {
      window.__benchListening = true;
      document.querySelector("#ctl-temperature-range")
        .addEventListener("input", (e) => window.__benchWork.push(performance.now() - e.timeStamp));
    }
  });
  await page.focus("#ctl-temperature-range");
  for (let i = 0; i < moves; i++) {
    const before = await page.evaluate(() => window.__ntpPerfPainted.length);
    await page.keyboard.press(i % 2 ? "ArrowLeft" : "ArrowRight");
    await page.waitForFunction((n) => window.__ntpPerfPainted.length > n, before, { timeout: 10000 });
  }
  return {
    paints: await page.evaluate(() => window.__ntpPerf.slice()),
    painted: await page.evaluate(() => window.__ntpPerfPainted.slice()),
    work: await page.evaluate(() => window.__benchWork.slice()),
  };
}

/**
 * Runs in the page: the page's own Previewer gets `vocab` synthetic token
 * names, seeded random logits and a 64-token history (bench/bench.js's
 * withSyntheticVocabulary), so slider moves paint the real panels at
 * that vocabulary size.
 * @param {{ vocab: number }} arg
 */
async function installSyntheticState({ vocab }) {
  const bench = await import("./bench/bench.js"); // the instance the page loaded for ?bench=1
  const { text, display, logits, history } = window.__benchSynthetic(vocab, 4242);
  await bench.withSyntheticVocabulary(text, display, { logits, history, position: history.length });
}

/**
 * Runs in the page: defines window.__benchSynthetic(vocab, seed), the
 * synthetic state both V = 49,152 measurements use: token names " tok<i>"
 * (displayed with ␣), seeded random logits roughly like a language model's
 * (a few strong candidates over a broad floor) and a 64-token history.
 */
function defineSyntheticState() {
  window.__benchSynthetic = (vocab, seed) => {
    const random = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32; };
    const text = Array.from({ length: vocab }, (_, i) => ` tok${i}`);
    const display = text.map((t) => t.replace(/ /g, "\u2423"));
    const logits = Float64Array.from({ length: vocab }, () => 4 * (random() + random() + random() - 1.5) + (random() < 0.001 ? 8 : 0));
    const history = Uint32Array.from({ length: 64 }, () => Math.floor(random() * vocab));
    return { text, display, logits, history };
  };
}

/**
 * Runs in the page: a Previewer over a synthetic vocabulary of `vocab` tokens
 * with seeded random logits and a 64-token history, and per move preview() +
 * the three distribution panels painted into a scratch copy of the panels.
 * @param {{ vocab: number, moves: number }} arg
 * @returns {Promise<{ preview: number[], sync: number[] }>}
 */
async function measureBigVocab({ vocab, moves }) {
  const wasm = await import("./pkg/nexttoken.js");
  await wasm.default();
  const { renderDist } = await import("./render/dist.js");
  const { renderRules } = await import("./render/rules.js");
  const { renderEntropy } = await import("./render/entropy.js");
  const { makeDefaultSettings, toEngineSettings } = await import("./state/settings.js");

  const { text, display, logits, history } = window.__benchSynthetic(vocab, 12345);
  const previewer = new wasm.Previewer(text, display);
  // As f32, like a model's output.
  previewer.set_state(Float32Array.from(logits), history, history.length);

  // Scratch panels, visible, styled like the page's.
  const scratch = document.createElement("div");
  const bodies = ["dist", "rules", "entropy"].map((name) => {
    const section = document.createElement("section");
    section.className = "panel";
    section.id = `bench-${name}`;
    const body = document.createElement("div");
    body.className = "body";
    section.append(body);
    scratch.append(section);
    return body;
  });
  document.body.append(scratch);

  const base = { ...makeDefaultSettings(), top_k: 50, top_p: 0.9, min_p: 0.02, repetition_penalty: 1.2 };
  const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r(performance.now())));
  const out = { preview: [], sync: [] };
  await nextFrame();
  for (let i = 0; i < moves; i++) {
    const temperature = i % 2 ? 0.7 : 1.3;
    const settings = toEngineSettings({ ...base, temperature });
    const t0 = performance.now();
    const distribution = previewer.preview(settings);
    const t1 = performance.now();
    renderDist(bodies[0], { distribution, chosen: null, banned: new Set(), bias: new Map() });
    // The views panels/paint.js hands these panels (their fields as there).
    const view = { ...base, temperature };
    renderRules(bodies[1], { distribution, settings: view, generated: [], vocabSize: vocab });
    renderEntropy(bodies[2], { distribution, temperature, vocabSize: vocab, settings: view });
    void bodies[2].offsetHeight; // layout now, as the frame would
    const t2 = performance.now();
    await nextFrame(); // one move per frame, as a user's key presses come
    out.preview.push(t1 - t0);
    out.sync.push(t2 - t0);
    // the next move starts in a fresh task, as a key press would
    await new Promise((r) => setTimeout(r, 0));
  }
  scratch.remove();
  previewer.free();
  return out;
}

/**
 * The same key presses and timing as the slider benchmark, on a scratch input
 * whose handler only changes one text node: what the browser's own input and
 * frame scheduling cost, with no page work.
 * @param {import("playwright-core").Page} page
 * @param {number} moves
 * @returns {Promise<number[]>}
 */
async function measureFloor(page, moves) {
  await page.evaluate(() => {
    const input = document.createElement("input");
    input.id = "bench-floor";
    const out = document.createElement("span");
    document.body.append(input, out);
    window.__benchFloor = [];
    window.__benchFloorPainted = [];
    input.addEventListener("keydown", (e) => {
      out.textContent = e.key + window.__benchFloor.length;
      // as the page's records: to the start of the next frame, and to the first task after its rendering
      requestAnimationFrame(() => {
        window.__benchFloor.push(performance.now() - e.timeStamp);
        const channel = new MessageChannel();
        channel.port1.onmessage = () => { channel.port1.close(); window.__benchFloorPainted.push(performance.now() - e.timeStamp); };
        channel.port2.postMessage(null);
      });
    });
  });
  await page.focus("#bench-floor");
  for (let i = 0; i < moves; i++) {
    const before = await page.evaluate(() => window.__benchFloorPainted.length);
    await page.keyboard.press(i % 2 ? "ArrowLeft" : "ArrowRight");
    await page.waitForFunction((n) => window.__benchFloorPainted.length > n, before, { timeout: 10000 });
  }
  return page.evaluate(() => {
    document.querySelector("#bench-floor").remove();
    return { frame: window.__benchFloor.slice(), painted: window.__benchFloorPainted.slice() };
  });
}
