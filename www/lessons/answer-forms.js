// Where the answer forms: the logit lens of the page's own step (the inside
// panel's report), drawn as the final top-1's probability after each layer
// with the layer from which it stays on top marked. Nothing here is
// computed or written down in advance: the figure follows the engine's
// InsideReport as it comes (a new prompt, a step), and says when there is none.

import { makeEl, makeSvg } from "../render/dom.js";
import { lensLayerName } from "../render/lens.js";
import { frame, axes, line, label, legend, COLORS } from "./svg.js";

/**
 * @param {HTMLElement} box
 * @param {{ model: string, prompt: string, answer: string }} d the engine's preset: the prompt and the answer it expects
 * @param {{ inside: () => any, follow: (fn: () => void) => void, setData: (d: any) => void, prompt: () => string }} ctx
 */
export function answerForms(box, d, ctx) {
  const chartBox = makeEl("div");
  const status = makeEl("p", { class: "help", role: "status" });
  box.append(chartBox, status);
  const draw = () => {
    const inside = ctx.inside();
    const n = Math.max(1, inside ? inside.lens.length - 1 : 30);
    const xLabel = "lens entry (0 = the embedding, l = after layer l − 1)";
    const o = { x: [0, n], y: [0, 1], width: 480, height: 220, xLabel, yLabel: "probability",
      title: inside ? `p(${inside.raw_top.display}) after each layer` : "waiting for the model's report", aria: "the final top-1's probability after each layer" };
    const f = frame(o);
    axes(f, o);
    if (!inside) {
      chartBox.replaceChildren(f.svg);
      status.textContent = `Waiting for the inside report of ${d.model} on “${d.prompt}” (the inside panel's logit lens).`;
      ctx.setData({ ...d, lens: null });
      return;
    }
    const xs = inside.lens.map((/** @type {any} */ e) => e.layer);
    line(f, xs, inside.lens.map((/** @type {any} */ e) => e.raw_top_prob), COLORS.blue);
    // Its rank too, on a log scale: the probability stays near 0 until the
    // answer is close, the rank shows it climbing before that.
    const ranks = inside.lens.map((/** @type {any} */ e) => e.raw_top_rank);
    const r = { x: [0, n], y: [1, 10 ** Math.ceil(Math.log10(Math.max(10, ...ranks)))], logY: true, width: 480, height: 220, xLabel,
      yLabel: "rank (1 = top)", title: `its rank after each layer (log scale)`, aria: "the final top-1's rank after each layer" };
    const g = frame(r);
    axes(g, r);
    line(g, xs, ranks, COLORS.blue);
    // null: even the last layer's rounding puts another token first.
    const from = /** @type {number|null} */ (inside.top1_from);
    if (from !== null) {
      for (const c of [f, g]) {
        const x = c.sx(from);
        c.svg.append(makeSvg("path", { d: `M${x.toFixed(1)},${c.M.t}V${c.H - c.M.b}`, stroke: COLORS.red, "stroke-dasharray": "4 3" }));
        label(c.svg, x - 4, c.M.t + 40, `top-1 from ${lensLayerName(from)}`, { fill: COLORS.red, "font-size": 10, "text-anchor": "end" });
      }
    }
    legend(f, [[`p(${inside.raw_top.display})`, COLORS.blue]]);
    chartBox.replaceChildren(f.svg, g.svg);
    chartBox.dataset.top1From = String(from ?? "none");
    const found = inside.raw_top.display === d.answer.replace(/ /g, "\u2423");
    const promptNote = ctx.prompt() === d.prompt ? "" : ` (the link's prompt, not the lesson's “${d.prompt}”)`;
    status.textContent = `The model's top-1 is ${inside.raw_top.display}${found ? ", the answer" : `, not the lesson's ${d.answer}`}${promptNote}: ` +
      (from === null ? "no layer keeps it on top to the end (a near tie)." : `it becomes the lens's top token ${lensLayerName(from)} and stays on top to the last layer.`);
    const last = inside.lens[inside.lens.length - 1];
    // The rank over the five layers before it is on top: how it climbs.
    const climb = from === null ? [] : inside.lens.slice(Math.max(0, from - 5), from).map((/** @type {any} */ e) => ({ name: lensLayerName(e.layer), rank: e.raw_top_rank }));
    ctx.setData({ ...d, lens: { top: inside.raw_top.display, from: from ?? "none", fromName: from === null ? "none" : lensLayerName(from),
      pFrom: from === null ? null : inside.lens[from].raw_top_prob, pLast: last.raw_top_prob, layers: inside.layers, climb } });
  };
  ctx.follow(draw);
  draw();
}
