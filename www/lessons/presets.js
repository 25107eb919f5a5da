// Every course preset of lesson 21 as data: the view it opens (a query, as a
// link would give it), the panels it shows, two lines saying what to look at,
// the figure it draws, and the numbers it shows. The numbers come from the
// engine (`course_lesson(name)` in crate/src/wasm/course.rs, the same as
// `nexttoken lesson <name>`); `numbers(d)` only picks and labels them.
// A row: [key, label, value, decimals] (decimals null: a whole number with
// thousands separators; a string value is shown as it is).

/** @typedef {[string, string, number|string, number|null]} NumberRow */

/**
 * @typedef {Object} Preset
 * @property {string} id            the permalink's ?lesson= and the engine's lesson name
 * @property {string} title
 * @property {[string, string]} caption  what to look at, in two lines
 * @property {string} query         the view (model, rules, panels) as URL parameters
 * @property {string} figure        the figure kind (lessons/figures.js)
 * @property {(d: any) => NumberRow[]} numbers
 */

const tauName = (t) => `τ = ${t}`;
const ENTROPY_NAMES = { "greedy": "greedy", "top-K=3": "top-k = 3", "tau=0.5": "τ = 0.5", "top-P=0.9": "top-p = 0.9", "tau=1.0": "τ = 1", "tau=2.0": "τ = 2" };

/** @type {Preset[]} */
export const PRESETS = [
  {
    id: "temperature-10class", title: "Temperature on the 10-class logits",
    caption: ["τ = 0.5 sharpens the ten logits toward token 1, τ = 2 flattens them toward uniform (log₂ 10 = 3.32 bits).",
      "Read p_max and the entropy for each τ; the panels below show τ = 0.5 live: move the slider."],
    query: "model=logits10&temperature=0.5&panels=dist,entropy,controls", figure: "bars-rows",
    numbers: (d) => d.rows.flatMap((r) => [
      [`p_max@${r.tau}`, `${tauName(r.tau)}: p_max`, r.p_max, 12],
      [`bits@${r.tau}`, `${tauName(r.tau)}: H (bits)`, r.entropy.bits, 12],
      [`nats@${r.tau}`, `${tauName(r.tau)}: H (nats)`, r.entropy.nats, 12],
    ]),
  },
  {
    id: "top-k-3", title: "Top-k = 3",
    caption: ["Only the three most likely tokens survive; their probabilities are renormalised to sum to 1.",
      "The kept mass before renormalising is 0.7821…: the other seven tokens carried the rest."],
    query: "model=logits10&top_k=3&panels=dist,rules,controls", figure: "bars-one",
    numbers: (d) => [
      ...d.probs.slice(0, 3).map((p, i) => [`p${i + 1}`, `q(token ${i + 1})`, p, 6]),
      ["kept_mass", "mass kept before renormalising", d.kept_mass, 16],
      ["support", "support", d.support, null],
      ["bits", "H (bits)", d.entropy.bits, 12],
    ],
  },
  {
    id: "top-p-0.9", title: "Top-p = 0.9 (the nucleus)",
    caption: ["Sort the probabilities and add them up: four tokens carry 0.8705 (< 0.9), five carry 0.9241.",
      "So the nucleus has exactly five members; a confident distribution would keep fewer."],
    query: "model=logits10&top_p=0.9&panels=dist,rules,controls", figure: "cumulative",
    numbers: (d) => [
      ...d.cumulative.slice(0, 8).map((c, i) => [`cum${i + 1}`, `cumulative mass of the top ${i + 1}`, c, 6]),
      ["below", "4 tokens carry", d.below, 16],
      ["reaches", "5 tokens carry", d.reaches, 16],
      ["support", "support", d.support, null],
      ["bits", "H (bits)", d.entropy.bits, 12],
    ],
  },
  {
    id: "four-panel", title: "Four strategies side by side",
    caption: ["The lesson's figure: τ = 0.5, τ = 2, top-k = 3 and top-p = 0.9 on the same ten logits.",
      "The entropies order them: greedy (0) → top-k = 3 → τ = 0.5 → top-p = 0.9 → τ = 1 → τ = 2."],
    query: "model=logits10&panels=rules", figure: "bars-four",
    numbers: (d) => d.entropies.flatMap((e) => [
      [`nats:${e.name}`, `${ENTROPY_NAMES[e.name]}: H (nats)`, e.nats, 12],
      [`bits:${e.name}`, `${ENTROPY_NAMES[e.name]}: H (bits)`, e.bits, 12],
    ]),
  },
  {
    id: "temperature-sweep", title: "Temperature sweep, τ = 0.2 … 5",
    caption: ["Thirty frames, log-spaced in τ: the distribution moves from a near point mass to near uniform.",
      "Press Play or drag the slider; the title gives τ and the entropy (uniform = 3.32 bits)."],
    query: "model=logits10&panels=dist", figure: "sweep",
    numbers: (d) => [
      ["frames", "frames", d.frames.length, null],
      ["tau_first", "first τ", d.frames[0].tau, 2],
      ["tau_last", "last τ", d.frames[d.frames.length - 1].tau, 2],
      ["bits_first", "H at τ = 0.2 (bits)", d.frames[0].bits, 2],
      ["bits_last", "H at τ = 5 (bits)", d.frames[d.frames.length - 1].bits, 2],
    ],
  },
  {
    id: "entropy-curves", title: "Entropy against temperature",
    caption: ["Blue: the 10-class vector climbs from 0 to log₂ 10; red: the bigram's P(·|b) stays on the 1-bit tie.",
      "The slope at τ = 1, dH/dln τ by finite difference, equals Var_q(z): the knob only moves what the logits' spread allows."],
    query: "model=logits10&panels=entropy", figure: "entropy-curves",
    numbers: (d) => [
      ["slope", "dH/dln τ at τ = 1 (nats, finite difference)", d.slope_fd_nats, 12],
      ["var", "Var_q(z) at τ = 1", d.var_z, 12],
      ["log2_10", "log₂ 10 (uniform over 10)", d.references[0].bits, 2],
      ["log2_3", "log₂ 3 (uniform over 3)", d.references[1].bits, 2],
    ],
  },
  {
    id: "tie-at-b", title: "The tie at b",
    caption: ["After b the bigram's two live logits are tied at 8.39 (the lesson's printed logits): no τ can break a tie.",
      "Temperature only moves the leak into the third token: negligible at τ = 2, still under 2 % at τ = 5."],
    query: "model=bigram-abc&prompt=ab&panels=dist,entropy,controls", figure: "bars-rows",
    numbers: (d) => d.rows.flatMap((r) => [
      [`a@${r.tau}`, `${tauName(r.tau)}: P(a|b)`, r.probs[0], 6],
      [`b@${r.tau}`, `${tauName(r.tau)}: P(b|b)`, r.probs[1], 6],
      [`c@${r.tau}`, `${tauName(r.tau)}: P(c|b)`, r.probs[2], 6],
      [`bits@${r.tau}`, `${tauName(r.tau)}: H (bits)`, r.bits, 7],
    ]),
  },
  {
    id: "repetition-penalty", title: "The repetition penalty breaks the tie",
    caption: ["Two recent a's, ρ = 2, once per occurrence: a's logit 8.39 is halved twice to 2.10 and c takes almost all the mass.",
      "Every other control leaves H(P(·|b)) at 1 bit; only the penalty, acting on one logit, moves it."],
    query: "model=bigram-abc&prompt=aab&repetition_penalty=2&penalty_window=4&penalty_mode=per_occurrence&panels=dist,rules,controls",
    figure: "bars-penalty",
    numbers: (d) => [
      ...d.penalised.map((p, i) => [`pen${i}`, `penalised P(${"abc"[i]}|b)`, p, 6]),
      ...d.controls.map((c) => [`H:${c.name}`, `H under ${c.name.replace("tau", "τ").replace("rho", "ρ")} (bits)`, c.bits, 4]),
    ],
  },
  {
    id: "greedy-cycle", title: "Greedy decoding must cycle",
    caption: ["The argmax map of the bigram: a→b, b→a (the tie goes to the lower id), c→b. Every orbit ends in the 2-cycle.",
      "With the penalty over a 4-token window, c gets back into the stream: abcbababcbababcba."],
    query: "model=bigram-abc&prompt=a&temperature=0&max_new=16&steps=16&panels=output,controls", figure: "cycle-graph",
    numbers: (d) => [
      ...d.map.map((m) => [`map:${m.from}`, `argmax after ${m.from}`, m.to, null]),
      ...d.map.map((m) => [`orbit:${m.from}`, `orbit from ${m.from}`, m.orbit, null]),
      ...d.map.map((m) => [`period:${m.from}`, `period from ${m.from}`, m.period, null]),
      ["greedy", "greedy, 16 tokens", d.greedy, null],
      ["greedy_penalty", "greedy + penalty ρ = 2, window 4", d.greedy_penalty, null],
    ],
  },
  {
    id: "sampled-chain", title: "The sampled chain",
    caption: ["Sampling at τ = 1 is a Markov chain with the transition matrix P̂; its eigenvalue −1 is the period-2 pole.",
      "Its stationary distribution weights b half the time; its entropy rate equals the corpus's ½ bit per token."],
    query: "model=bigram-abc&prompt=a&steps=16&panels=output", figure: "matrix",
    numbers: (d) => [
      ...d.lesson.eigenvalues.map((e, i) => [`eig${i}`, `eigenvalue ${i + 1}`, e.re, 6]),
      ...d.lesson.stationary.map((p, i) => [`pi${i}`, `π(${"abc"[i]})`, p, 6]),
      ["rate", "entropy rate (bits/token)", d.lesson.entropy_rate_bits, 6],
      ["corpus_rate", "the corpus's entropy rate", d.corpus_entropy_rate_bits, 6],
      ["shipped_rate", "this page's trained bigram: entropy rate", d.shipped.entropy_rate_bits, 4],
    ],
  },
  {
    id: "gallery", title: "Generation gallery",
    caption: ["Every strategy from the prompt a on the bigram. Greedy collapses to the 2-cycle ab; any sampling recovers abcb-like text.",
      "Top-k = 2 behaves like plain temperature here: with three tokens it keeps everything but the zero-probability one."],
    query: "model=bigram-abc&prompt=a&panels=output,controls", figure: "gallery",
    numbers: (d) => d.rows.map((r) => [`gallery:${r.name}`, `${r.name}${r.name.startsWith("greedy") ? "" : ` (seed ${r.seed})`}`, r.text, null]),
  },
  {
    id: "diversity", title: "Diversity against temperature",
    caption: ["The number of different 8-token completions from 40 seeds: one at τ = 0 (greedy ignores the seed), more as τ rises.",
      "Measured here on bard (the default model); press the button to measure the real model, SmolLM2, too."],
    query: "model=bard&panels=output,controls", figure: "diversity",
    numbers: (d) => Object.entries(d.results ?? {}).flatMap(([model, pts]) =>
      pts.map((p) => [`${model}@${p.tau}`, `${model}, τ = ${p.tau}: distinct of ${d.seeds}`, p.distinct, null])),
  },
  {
    id: "answer-forms", title: "Where the answer forms",
    caption: ["SmolLM2 on “The capital of France is”, greedy: the logit lens reads the next token after every layer, as if the model ended there.",
      "Find the layer from which the answer is the top token and stays so (★ in the inside panel), and watch its rank climb before it."],
    query: "model=smollm2-135m&prompt=The+capital+of+France+is&temperature=0&panels=output,dist,inside,controls", figure: "answer-forms",
    numbers: (d) => (d.lens ? [
      ["top", "the final top-1", d.lens.top, null],
      ["top1_from", "lens entry from which it stays the top-1 (0 = the embedding)", d.lens.from, null],
      ["top1_layer", "that is", d.lens.fromName, null],
      ...(d.lens.pFrom === null ? [] : [["p_from", "its probability there", d.lens.pFrom, 6]]),
      ["p_last", "its probability after the last layer (the raw distribution)", d.lens.pLast, 6],
      ...d.lens.climb.map((/** @type {{ name: string, rank: number }} */ c) => [`rank:${c.name}`, `its rank ${c.name}`, c.rank, null]),
    ] : [["top", "the final top-1", "waiting for the model's report", null]]),
  },
  {
    id: "kv-cache", title: "What the KV cache saves",
    caption: ["Twelve steps without a cache rebuild the whole triangle of scores each time: 364 scores; with it, one row per step: 78.",
      "An 8-token prompt plus 24 generated tokens: 31 K/V projections instead of 468, a 15.1× reduction."],
    query: "model=kv-demo&panels=kv,inside,output", figure: "triangle",
    numbers: (d) => [
      ["cached_scores", "12 steps, cached: scores", d.triangle.cached_scores, null],
      ["naive_scores", "12 steps, naive: scores", d.triangle.naive_scores, null],
      ["cached_kv", "8 + 24 tokens, cached: K/V projections", d.decode.cached_kv, null],
      ["naive_kv", "8 + 24 tokens, naive: K/V projections", d.decode.naive_kv, null],
      ["kv_ratio", "reduction (×)", d.decode.ratio, 1],
    ],
  },
  {
    id: "kv-demo-flops", title: "The lesson's 8-step demo: naive against cached FLOPs",
    caption: ["One head, d_head = 4: at step t the naive pass costs t times the cached one (ratios 1…8).",
      "Over 8 steps: 3,564 FLOPs against 708 (5.03×); the cached outputs equal the naive ones to round-off."],
    query: "model=kv-demo&steps=5&panels=kv,inside", figure: "flop-bars",
    numbers: (d) => [
      ...d.per_step_ratio.map((r, i) => [`ratio${i + 1}`, `step ${i + 1}: naive / cached`, r, 6]),
      ["naive_total", "cumulative naive FLOPs", d.cumulative_naive, null],
      ["cached_total", "cumulative cached FLOPs", d.cumulative_cached, null],
      ["total_ratio", "ratio", d.cumulative_ratio, 2],
      ["cache_numbers", "cache at t = 8: numbers of state", d.cache_numbers, null],
      ["engine_diff", "this engine's kv-demo model: max |naive − cached| over its logits", d.engine_check.max_abs_diff, -1],
    ],
  },
  {
    id: "flop-curve", title: "The FLOP curve to T = 64 (exercise 4)",
    caption: ["Cumulative FLOPs on log-log axes: naive generation grows like T³, cached like T²: the slopes show it.",
      "At small T the d_head² projections flatten both curves; the slopes approach 3 and 2 as T grows."],
    query: "model=kv-demo&panels=kv", figure: "flop-curve",
    numbers: (d) => [
      ["naive64", "naive at T = 64", d.cumulative_naive[63], null],
      ["cached64", "cached at T = 64", d.cumulative_cached[63], null],
      ["slope_naive", "slope of naive, T = 32 → 64", d.slope_naive_last_octave, 3],
      ["slope_cached", "slope of cached, T = 32 → 64", d.slope_cached_last_octave, 3],
    ],
  },
  {
    id: "kv-size", title: "How big is a KV cache?",
    caption: ["2 × layers × KV heads × context × d_head numbers: the lesson's 32 × 32 × 8192 × 128 at fp16 is 4.29 GB per request.",
      "Lower the KV heads (grouped-query attention) and watch the cache shrink; or use the loaded model's own shape."],
    query: "panels=kv", figure: "kv-size",
    numbers: (d) => [
      ["numbers", "numbers", d.numbers, null],
      ["bytes", "bytes", d.bytes, null],
      ["gb", "GB", d.gb, 2],
      ["gqa_saving", "saved by sharing K/V heads (×)", d.gqa_saving, 1],
    ],
  },
  {
    id: "beam-b2", title: "Beam search, B = 2 (exercise 6)",
    caption: ["From a, 8 tokens, two beams. Every step after b is a coin flip between a and c, so all surviving paths score about 4 ln ½.",
      "Length normalisation divides every beam by the same 8^α: it cannot change the ranking of equal-length beams."],
    query: "model=bigram-abc&prompt=a&beams=2&beam_len=8&alpha=1&panels=beam", figure: "beam-tree",
    numbers: (d) => [
      ...d.runs[0].beams.map((b, i) => [`beam${i}`, `beam ${i + 1} (α = 0)`, b.text, null]),
      ...d.runs[0].beams.map((b, i) => [`logprob${i}`, `beam ${i + 1}: total ln q`, b.logprob, 4]),
      ...d.runs[1].beams.map((b, i) => [`beam_a1_${i}`, `beam ${i + 1} (α = 1)`, b.text, null]),
      ["ideal", "4 ln ½ (the corpus's chain)", d.ideal_logprob, 4],
    ],
  },
  {
    id: "bigram-retrain", title: "Retrain the lesson-18 bigram",
    caption: ["600 AdamW steps on the abcb corpus, run here in your browser: the loss falls toward (24/49)·ln 2 = 0.3395,",
      "the floor of any bigram (24 of the 49 pairs start at b, a fair coin). Then sample from what was just trained."],
    query: "model=bigram-abc&prompt=a&panels=output", figure: "loss-curve",
    numbers: (d) => [
      ["floor", "(24/49)·ln 2", d.floor, 4],
      ["final_loss", "final loss (nats/token)", d.losses[d.losses.length - 1], 4],
      ...d.probs.flatMap((row, i) => row.map((p, j) => [`P${i}${j}`, `P(${"abc"[j]}|${"abc"[i]})`, p, 3])),
      ["sample", "16 tokens sampled from it (seed 42)", d.sample, null],
    ],
  },
];

/** @param {string|null} id */
export function findPreset(id) {
  return PRESETS.find((p) => p.id === id) ?? null;
}
