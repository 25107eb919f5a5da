// The KV-cache size calculator: layers, heads, KV heads, d_head, context and
// bytes per number in, the cache's numbers and bytes out (the engine's
// course_kv_size); "the loaded model" fills in its own shape.

import { makeEl, makeSvg } from "../render/dom.js";
import { COLORS, label } from "./svg.js";

/** Two bars: the cache with one K/V head per query head, and with this shape's KV heads. */
function sizeBars(d) {
  const W = 460, H = 110, L = 150, R = 90;
  const svg = makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "lesson-chart", role: "img", "aria-label": "KV cache size" });
  svg.append(makeSvg("rect", { x: 0, y: 0, width: W, height: H, fill: "var(--panel, #fff)" }));
  label(svg, W / 2, 15, `KV cache for one request at ${d.context} positions`, { "text-anchor": "middle", "font-weight": "bold" });
  const rows = [[`${d.heads} KV heads (no sharing)`, d.full_mha_bytes, COLORS.gray], [`${d.kv_heads} KV heads`, d.bytes, COLORS.blue]];
  rows.forEach(([text, bytes, color], i) => {
    const y = 30 + i * 36, w = (bytes / Math.max(d.full_mha_bytes, d.bytes)) * (W - L - R);
    label(svg, L - 6, y + 16, text, { "text-anchor": "end" });
    svg.append(makeSvg("rect", { x: L, y, width: Math.max(1, w).toFixed(1), height: 24, fill: color }));
    label(svg, L + w + 6, y + 16, `${(bytes / 1e9).toPrecision(3)} GB`);
  });
  return svg;
}

const FIELDS = [
  ["layers", "layers"], ["heads", "query heads"], ["kv_heads", "KV heads"], ["head_dim", "d_head"],
  ["context", "context (positions)"], ["bytes_per_number", "bytes per number"],
];

/**
 * @param {HTMLElement} box
 * @param {any} d the lesson's sizes (32 × 32 × 128 × 8192, fp16)
 * @param {{ wasm: any, setData: (d: any) => void, modelInfo: () => any, say: (text: string) => void }} ctx
 */
export function kvSize(box, d, ctx) {
  const form = makeEl("div", { class: "lesson-kv-form" });
  /** @type {Record<string, HTMLInputElement>} */
  const inputs = {};
  for (const [key, text] of FIELDS) {
    const id = `kv-size-${key}`;
    const cell = makeEl("div");
    const input = /** @type {HTMLInputElement} */ (makeEl("input", { type: "number", id, min: 1, step: 1, value: d[key] }));
    cell.append(makeEl("label", { for: id }, text), input);
    inputs[key] = input;
    form.append(cell);
  }
  const buttons = makeEl("div", { class: "buttons" });
  const lesson = makeEl("button", { type: "button", "data-action": "kv-lesson" }, "The lesson's model");
  const gqa = makeEl("button", { type: "button", "data-action": "kv-gqa" }, "GQA: 8 KV heads");
  const loaded = makeEl("button", { type: "button", "data-action": "kv-loaded" }, "The loaded model");
  buttons.append(lesson, gqa, loaded);
  let bars = sizeBars(d);
  box.append(form, buttons, bars);
  const recompute = () => {
    const v = FIELDS.map(([k]) => Number(inputs[k].value));
    try {
      const next = ctx.wasm.course_kv_size(...v);
      ctx.setData(next);
      const fresh = sizeBars(next);
      bars.replaceWith(fresh);
      bars = fresh;
      ctx.say("");
    } catch (e) { ctx.say(String(e?.message ?? e)); }
  };
  const fill = (shape) => { for (const [k] of FIELDS) if (shape[k] !== undefined) inputs[k].value = String(shape[k]); recompute(); };
  for (const input of Object.values(inputs)) input.addEventListener("input", recompute);
  lesson.addEventListener("click", () => fill(d));
  gqa.addEventListener("click", () => fill({ ...d, kv_heads: 8 }));
  loaded.addEventListener("click", () => {
    const info = ctx.modelInfo();
    if (!info || !info.layers) { ctx.say("the loaded model has no attention layers (pick bard or SmolLM2 in the model panel)"); return; }
    fill({ layers: info.layers, heads: info.heads, kv_heads: info.kv_heads, head_dim: info.head_dim, context: info.context, bytes_per_number: info.bytes_per_number });
  });
}
