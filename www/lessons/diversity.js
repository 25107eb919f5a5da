// Diversity against temperature (course text 000): distinct 8-token
// completions from seeds 1…40 at each τ, measured here on the default model
// (automatically) and on the real model (on request), drawn as curves. The
// engine generates (course_completion on a model loaded into the lessons'
// own wasm instance); this module counts, yielding between seeds so the page
// stays responsive.

import { makeEl } from "../render/dom.js";
import { frame, axes, line, legend, COLORS } from "./svg.js";

const MODELS = [
  { name: "bard", color: COLORS.blue, auto: true },
  { name: "smollm2-135m", color: COLORS.red, auto: false },
];

const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The catalogue's entry for a model (models/index.json). */
async function entryOf(name) {
  const res = await fetch(new URL("../models/index.json", import.meta.url));
  if (!res.ok) throw new Error(`models/index.json: HTTP ${res.status}`);
  const entry = (await res.json()).models.find((m) => m.name === name);
  if (!entry) throw new Error(`${name} is not in models/index.json`);
  return entry;
}

async function fetchOk(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url.pathname}: HTTP ${res.status}${res.status === 404 ? " (pkg-scripts/fetch-smollm2 fetches the real model)" : ""}`);
  return res;
}

/** A Playground of the model in the lessons' wasm instance. */
async function openModel(wasm, entry) {
  const base = new URL("../models/", import.meta.url);
  if (entry.gguf) {
    const bytes = new Uint8Array(await (await fetchOk(new URL(entry.gguf, base))).arrayBuffer());
    return wasm.Playground.from_gguf(bytes, entry.name);
  }
  const manifestUrl = new URL(entry.path, base);
  const manifestText = await (await fetchOk(manifestUrl)).text();
  const manifest = JSON.parse(manifestText);
  const [weights, tokenizer] = await Promise.all([
    fetchOk(new URL(manifest.weights, manifestUrl)).then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b)),
    fetchOk(new URL(manifest.tokenizer, manifestUrl)).then((r) => r.text()),
  ]);
  return wasm.Playground.from_files(manifestText, weights, tokenizer);
}

export function diversity(box, d, ctx) {
  const results = {};
  const chartBox = makeEl("div");
  const status = makeEl("p", { class: "help", role: "status" });
  const buttons = makeEl("div", { class: "buttons" });
  box.append(chartBox, buttons, status);
  const draw = () => {
    const o = { x: [0, d.taus[d.taus.length - 1]], y: [0, d.seeds], width: 480, height: 260,
      title: `Distinct ${d.length}-token completions from ${d.seeds} seeds`, xLabel: "temperature τ", yLabel: "distinct completions", aria: "diversity against temperature" };
    const f = frame(o);
    axes(f, o);
    const shown = [];
    for (const m of MODELS) {
      const pts = results[m.name];
      if (!pts?.length) continue;
      line(f, pts.map((p) => p.tau), pts.map((p) => p.distinct), m.color);
      shown.push([m.name, m.color]);
    }
    legend(f, shown);
    chartBox.replaceChildren(f.svg);
    ctx.setData({ ...d, results });
  };
  const measure = async (m) => {
    box.dataset.busy = m.name;
    try {
      const entry = await entryOf(m.name);
      status.textContent = `loading ${m.name}…`;
      const pg = await openModel(ctx.wasm, entry);
      const prompt = entry.prompt ?? "";
      results[m.name] = [];
      for (const tau of d.taus) {
        const seen = new Set();
        for (let seed = 1; seed <= d.seeds; seed++) {
          seen.add(Array.from(ctx.wasm.course_completion(pg, prompt, tau, BigInt(seed), d.length)).join(","));
          if (seed % 4 === 0) { status.textContent = `${m.name}: τ = ${tau}, seed ${seed} of ${d.seeds}`; await pause(); }
        }
        results[m.name].push({ tau, distinct: seen.size });
        draw();
      }
      pg.free();
      status.textContent = `${m.name}: prompt ${JSON.stringify(prompt)}, seeds 1…${d.seeds}, ${d.length} tokens each`;
      box.dataset.done = `${box.dataset.done ?? ""} ${m.name}`.trim();
    } catch (e) {
      status.textContent = `${m.name}: ${e?.message ?? e}`;
    }
    delete box.dataset.busy;
  };
  for (const m of MODELS.filter((x) => !x.auto)) {
    const b = makeEl("button", { type: "button", "data-action": `diversity-${m.name}` }, `Measure on ${m.name} (the real model: 98 MB, one to two minutes)`);
    b.addEventListener("click", () => { if (!box.dataset.busy) measure(m); });
    buttons.append(b);
  }
  draw();
  (async () => { for (const m of MODELS.filter((x) => x.auto)) await measure(m); })();
}
