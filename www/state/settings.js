// The decoding controls: their ranges, defaults and validation. One table so
// the form, the URL parser and the tests all agree on what a value may be.

/**
 * @typedef {Object} NumberControl
 * @property {string} key       settings field (snake_case, as in PROTOCOL.md)
 * @property {string} label
 * @property {string} help      one line shown under the control
 * @property {number} def       default
 * @property {number} min       smallest value accepted
 * @property {number} max       largest value accepted
 * @property {number} sliderMax the slider's end (the number box accepts up to max)
 * @property {number} step
 * @property {boolean} [integer]
 * @property {(v: number) => string|null} [extra] extra check, returns a message
 * @property {string} group     which fieldset it lives in
 * @property {boolean} [local]   page-only (not sent to the engine)
 * @property {boolean} [noSlider] a number box only (changing it re-runs the model)
 */

/** @type {NumberControl[]} */
export const NUMBER_CONTROLS = [
  { key: "temperature", label: "Temperature τ", help: "0 = greedy; 1 = the model's own distribution",
    def: 1, min: 0, max: 100, sliderMax: 3, step: 0.01, group: "rules",
    extra: (v) => (v > 0 && v < 1e-4 ? "use 0 (greedy) or at least 0.0001" : null) },
  { key: "top_k", label: "Top-k", help: "keep the k most likely tokens; 0 = off",
    def: 0, min: 0, max: 1000000, sliderMax: 50, step: 1, integer: true, group: "rules" },
  { key: "top_p", label: "Top-p (nucleus)", help: "smallest set with this much mass; 1 = off",
    def: 1, min: 0, max: 1, sliderMax: 1, step: 0.01, group: "rules",
    extra: (v) => (v <= 0 ? "top-p must be above 0" : null) },
  { key: "min_p", label: "Min-p", help: "drop tokens below min-p × p_max; 0 = off",
    def: 0, min: 0, max: 1, sliderMax: 1, step: 0.01, group: "rules" },
  { key: "repetition_penalty", label: "Repetition penalty ρ", help: "1 = off; divides positive logits, multiplies negative ones",
    def: 1, min: 1, max: 100, sliderMax: 3, step: 0.05, group: "penalties" },
  { key: "penalty_window", label: "Penalty window", help: "last w tokens (prompt included); 0 = all",
    def: 64, min: 0, max: 100000, sliderMax: 256, step: 1, integer: true, group: "penalties" },
  { key: "presence_penalty", label: "Presence penalty", help: "subtracted once from every token already seen",
    def: 0, min: -2, max: 2, sliderMax: 2, step: 0.05, group: "penalties" },
  { key: "frequency_penalty", label: "Frequency penalty", help: "subtracted per occurrence",
    def: 0, min: -2, max: 2, sliderMax: 2, step: 0.05, group: "penalties" },
  { key: "bias_amount", label: "Bias to add", help: "used when you click “bias” on a token",
    def: 2, min: -100, max: 100, sliderMax: 10, step: 0.5, group: "penalties", local: true },
  { key: "seed", label: "Seed", help: "same seed, same text",
    def: 42, min: 0, max: 4294967295, sliderMax: 100, step: 1, integer: true, group: "run", noSlider: true },
  { key: "max_new", label: "Max new tokens", help: "the run stops after this many",
    def: 64, min: 1, max: 4096, sliderMax: 256, step: 1, integer: true, group: "run" },
  { key: "beams", label: "Beams B", help: "beam search keeps the B best prefixes",
    def: 3, min: 1, max: 16, sliderMax: 8, step: 1, integer: true, group: "beam" },
  { key: "alpha", label: "Length normalisation α", help: "score = log p / length^α",
    def: 0.8, min: 0, max: 2, sliderMax: 2, step: 0.05, group: "beam" },
  { key: "beam_len", label: "Beam length", help: "new tokens per beam", def: 8, min: 1, max: 64,
    sliderMax: 24, step: 1, integer: true, group: "beam", local: true },
];

/** Choice controls: a select each. */
export const CHOICE_CONTROLS = [
  { key: "order", label: "Order of the rules", def: "hf", group: "rules",
    options: [["hf", "Hugging Face: temperature first"], ["llama", "llama.cpp: temperature last"]] },
  { key: "penalty_mode", label: "Penalty counts", def: "per_token", group: "penalties",
    options: [["per_token", "once per token (Hugging Face)"], ["per_occurrence", "once per occurrence (course demo)"]] },
];

/**
 * Check a number typed or slid into a control.
 * @param {NumberControl} c
 * @param {number} v
 * @returns {string|null} a message when refused, null when fine
 */
export function checkNumber(c, v) {
  if (!Number.isFinite(v)) return `${c.label}: not a number`;
  if (v < c.min || v > c.max) return `${c.label} must be between ${c.min} and ${c.max}`;
  if (c.integer && !Number.isInteger(v)) return `${c.label} must be a whole number`;
  const more = c.extra ? c.extra(v) : null;
  return more ? `${c.label}: ${more}` : null;
}

/**
 * Default values of every control, plus the list-valued settings.
 * @returns {Record<string, any>}
 */
export function makeDefaultSettings() {
  const s = {};
  for (const c of NUMBER_CONTROLS) s[c.key] = c.def;
  for (const c of CHOICE_CONTROLS) s[c.key] = c.def;
  s.stop = ["\n\n"];
  s.banned = [];
  s.logit_bias = [];
  s.use_cache = true;
  s.chat = false;
  return s;
}

/**
 * The settings object the engine expects (drops the page-only fields).
 * @param {Record<string, any>} s
 * @param {{ beam?: boolean }} [opts] beam: max_new becomes the beam length
 * @returns {Record<string, any>}
 */
export function toEngineSettings(s, opts = {}) {
  const out = {};
  for (const c of NUMBER_CONTROLS) if (!c.local) out[c.key] = s[c.key];
  for (const c of CHOICE_CONTROLS) out[c.key] = s[c.key];
  out.stop = s.stop.slice();
  out.banned = s.banned.slice();
  out.logit_bias = s.logit_bias.map((pair) => pair.slice());
  out.use_cache = s.use_cache;
  out.chat = s.chat;
  out.top_n = 10;
  if (opts.beam) out.max_new = s.beam_len;
  return out;
}

/**
 * Stop strings as typed: one per line, with \n and \t written as escapes.
 * @param {string} text
 * @returns {string[]}
 */
export function parseStopText(text) {
  return text.split("\n").filter((l) => l.length > 0)
    .map((l) => l.replace(/\\n/g, "\n").replace(/\\t/g, "\t").replace(/\\\\/g, "\\"));
}

/**
 * Inverse of parseStopText.
 * @param {string[]} stops
 * @returns {string}
 */
export function formatStopText(stops) {
  return stops.map((s) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\t/g, "\\t")).join("\n");
}
