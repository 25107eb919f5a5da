// The temperature sweep: 30 log-spaced frames from τ = 0.2 to 5, played or
// scrubbed, with τ and the entropy in the title (the lesson's
// "tau = %.2f     H = %.2f bits   (uniform = 3.32)"). The frames are the
// engine's (course_lesson("temperature-sweep")).

import { makeEl } from "../render/dom.js";
import { barChart } from "./svg.js";

/** The title of frame k. */
export function sweepTitle(d, k) {
  const f = d.frames[k];
  return `τ = ${f.tau.toFixed(2)}     H = ${f.bits.toFixed(2)} bits   (uniform = ${d.uniform_bits.toFixed(2)})`;
}

/**
 * @param {HTMLElement} box
 * @param {any} d
 * @returns {{ chart: ReturnType<typeof barChart>, show: (k: number) => void }}
 */
export function sweep(box, d) {
  const chart = barChart(d.frames[0].probs, { title: sweepTitle(d, 0), width: 460, height: 260, aria: "temperature sweep" });
  const controls = makeEl("div", { class: "buttons lesson-sweep" });
  const play = makeEl("button", { type: "button", "data-action": "sweep-play", "aria-pressed": "false" }, "Play");
  const scrub = /** @type {HTMLInputElement} */ (makeEl("input", { type: "range", min: 0, max: d.frames.length - 1, step: 1, value: 0, "aria-label": "frame", "data-action": "sweep-scrub" }));
  const count = makeEl("span", { class: "help", "data-slot": "sweep-frame" });
  controls.append(play, scrub, count);
  box.append(chart.svg, controls);
  let timer = 0;
  const show = (k) => {
    chart.set(d.frames[k].probs, sweepTitle(d, k));
    scrub.value = String(k);
    count.textContent = `frame ${k + 1} of ${d.frames.length}`;
    chart.svg.dataset.frame = String(k);
  };
  const stop = () => { clearInterval(timer); timer = 0; play.textContent = "Play"; play.setAttribute("aria-pressed", "false"); };
  play.addEventListener("click", () => {
    if (timer) { stop(); return; }
    play.textContent = "Pause";
    play.setAttribute("aria-pressed", "true");
    let k = Number(scrub.value);
    if (k >= d.frames.length - 1) k = -1;
    // 8 frames per second, as the lesson's saveanim(..., 8).
    timer = setInterval(() => { k += 1; show(k); if (k >= d.frames.length - 1) stop(); }, 125);
  });
  scrub.addEventListener("input", () => { stop(); show(Number(scrub.value)); });
  show(0);
  return { chart, show };
}
