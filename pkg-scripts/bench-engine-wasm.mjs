// The wasm engine's own speed on a GGUF model in headless Chromium, one
// thread, measured the way `nexttoken bench` and pkg-scripts/bench-llamacpp
// measure natively: building the model from the file's bytes, prefill of a
// 64-token prompt, and 128 decode steps one at a time (each `step` is the
// model call plus the step's report over the whole vocabulary, as the page
// uses it), medians of repeats; then the tab's memory (largest renderer
// process, VmRSS and peak VmHWM from /proc).
// Usage (after pkg-scripts/build and pkg-scripts/fetch-smollm2):
//   node pkg-scripts/bench-engine-wasm.mjs [models/path/to/file.gguf] [repeats]
import { startServer, launchBrowser, rendererMemory } from "../tests/e2e/harness.mjs";

const file = process.argv.find((a) => a.endsWith(".gguf")) ?? "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
const repeats = Number(process.argv.find((a) => /^\d+$/.test(a)) || 3);
const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error") console.error(`page: ${m.text()}`); });
  // Any document of the server's origin will do: the engine is imported into it.
  await page.goto(`${server.url}models/index.json`);
  const result = await page.evaluate(async ({ file, repeats }) => {
    const mod = await import("/pkg/nexttoken.js");
    await mod.default();
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const t0 = performance.now();
    const res = await fetch(`/${file}`);
    if (!res.ok) throw new Error(`GET /${file}: HTTP ${res.status} (run pkg-scripts/fetch-smollm2)`);
    let bytes = new Uint8Array(await res.arrayBuffer());
    const t1 = performance.now();
    const pg = mod.Playground.from_gguf(bytes, file.split("/").pop());
    bytes = null;
    const t2 = performance.now();
    const greedy = { temperature: 0, max_new: 4096 };
    // " the" is one token: 64 of them are a 64-token prompt.
    const prompt = " the".repeat(64);
    const prefill = [];
    for (let r = 0; r < repeats + 1; r++) {
      const s = performance.now();
      const rep = pg.start(prompt, greedy);
      if (rep.prompt_tokens.length !== 64) throw new Error(`the prompt is ${rep.prompt_tokens.length} tokens, not 64`);
      if (r > 0) prefill.push(64 / ((performance.now() - s) / 1000)); // the first run warms up
    }
    const decode = [];
    for (let r = 0; r < repeats; r++) {
      pg.start("The history of the printing press", greedy);
      const s = performance.now();
      for (let i = 0; i < 128; i++) pg.step(greedy);
      decode.push(128 / ((performance.now() - s) / 1000));
    }
    return {
      fetch_s: (t1 - t0) / 1000, build_s: (t2 - t1) / 1000,
      prefill64_tok_s: median(prefill), prefill64_runs: prefill,
      decode_tok_s: median(decode), decode_runs: decode, decode_tokens: 128,
    };
  }, { file, repeats });
  const memory = await rendererMemory();
  console.log(JSON.stringify({ engine: "nexttoken wasm (Chromium, 1 thread)", file, ...result,
    tab_rss_mb: memory?.rss ?? null, tab_peak_mb: memory?.hwm ?? null }));
} finally {
  await browser.close();
  await server.close();
}
