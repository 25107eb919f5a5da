// Where the wasm engine's decode time goes, in headless Chromium: a CPU
// profile (Chrome DevTools Protocol, 100 µs sampling) of N `Playground.step`
// calls on a model, printed as the functions with the most self time.
// A look for engineers, not a benchmark: `pkg-scripts/bench` measures speed.
// It loads www/pkg-profile/, the same build through wasm-bindgen with its
// function names kept (pkg-scripts/build leaves them out of www/pkg):
//   wasm-bindgen --target web --keep-debug --out-dir www/pkg-profile --out-name nexttoken \
//     target/wasm/wasm32-unknown-unknown/release/nexttoken.wasm
// Usage (after pkg-scripts/build and that): node pkg-scripts/profile-wasm.mjs [bard|models/path/file.gguf] [steps] [top] [--inside]
// (--inside: the steps with the inside view on, `Playground.set_inside(true)`)
import { startServer, launchBrowser } from "../tests/e2e/harness.mjs";

const model = process.argv[2] ?? "bard";
const steps = Number(process.argv[3] ?? 64);
const top = Number(process.argv[4] ?? 30);
const inside = process.argv.includes("--inside");
const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}models/index.json`);
  await page.evaluate(async ({ model, inside }) => {
    const mod = await import("/pkg-profile/nexttoken.js");
    await mod.default();
    const get = async (path) => {
      const res = await fetch(path);
      if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
      return res;
    };
    if (model.endsWith(".gguf")) {
      window.pg = mod.Playground.from_gguf(new Uint8Array(await (await get(`/${model}`)).arrayBuffer()), "profiled");
    } else {
      const base = `/models/${model}/`;
      const manifest = await (await get(`${base}model.json`)).text();
      const m = JSON.parse(manifest);
      const weights = new Uint8Array(await (await get(base + m.weights)).arrayBuffer());
      window.pg = mod.Playground.from_files(manifest, weights, await (await get(base + m.tokenizer)).text());
    }
    window.pg.set_inside(inside);
    window.pg.start("The history of the", { temperature: 0, max_new: 4096 });
  }, { model, inside });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  await cdp.send("Profiler.start");
  const ms = await page.evaluate(({ steps }) => {
    const t = performance.now();
    const greedy = { temperature: 0, max_new: 4096 };
    for (let i = 0; i < steps; i++) {
      const rep = window.pg.step(greedy);
      if (rep.stop) window.pg.start("The history of the", greedy); // bard's context is 128
    }
    return performance.now() - t;
  }, { steps });
  const { profile } = await cdp.send("Profiler.stop");
  const dt = profile.timeDeltas.reduce((a, b) => a + b, 0) / profile.samples.length / 1000; // ms per sample
  const self = new Map();
  for (const node of profile.nodes) {
    const name = node.callFrame.functionName || `(${node.callFrame.url.split("/").pop() || "anonymous"})`;
    self.set(name, (self.get(name) ?? 0) + (node.hitCount ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`${model}: ${steps} steps in ${ms.toFixed(1)} ms (${(ms / steps).toFixed(2)} ms/step); ${total} samples`);
  for (const [name, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(100 * hits / total).toFixed(1).padStart(5)} %  ${(hits * dt / steps).toFixed(3).padStart(7)} ms/step  ${name.slice(0, 150)}`);
  }
} finally {
  await browser.close();
  await server.close();
}
