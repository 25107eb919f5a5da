//# allFunctionsCalledOnLoad
// Number formatting and the colour scale, shared by every panel so the same
// quantity always reads the same way.

import ENGINE from "../state/engine-settings.js";

/**
 * Probability with 6 decimals (the course prints 6), or scientific for tiny values.
 * @param {number} p
 * @returns {string}
 */
export function formatProb(p) {
  if (p === 0) return "0";
  if (p < 1e-4) return p.toExponential(2);
  return p.toFixed(6);
}

/**
 * Short probability for tight spaces (bars, tooltips).
 * @param {number} p
 * @returns {string}
 */
export function formatProbShort(p) {
  if (p === 0) return "0";
  if (p < 0.001) return p.toExponential(1);
  return p.toFixed(3);
}

/**
 * Entropy in bits with 4 decimals (the course's 1.5006).
 * @param {number} bits
 * @returns {string}
 */
export function formatBits(bits) {
  return `${bits.toFixed(4)} bits`;
}

/**
 * Byte count in B / KiB / MiB.
 * @param {number} n
 * @returns {string}
 */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

/**
 * Integer with thin thousands separators.
 * @param {number} n
 * @returns {string}
 */
export function formatCount(n) {
  return Math.round(n).toLocaleString("en-US");
}

// Viridis stops (perceptually uniform, readable by colour-blind readers).
const VIRIDIS = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [110, 206, 88], [181, 222, 43], [253, 231, 37],
];

/**
 * Colour for a probability on the viridis scale; low probability is dark.
 * Returns the background and a text colour with enough contrast.
 * @param {number} p in [0, 1]
 * @returns {{ bg: string, fg: string }}
 */
export function colourForProb(p) {
  const x = Math.min(1, Math.max(0, p)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const t = x - i;
  const c = VIRIDIS[i].map((a, k) => Math.round(a + (VIRIDIS[i + 1][k] - a) * t));
  // Viridis gets lighter as it goes; switch the text to dark past the middle.
  const fg = x > 4.5 ? "#111" : "#fff";
  return { bg: `rgb(${c[0]}, ${c[1]}, ${c[2]})`, fg };
}

/** Okabe–Ito colours used for series (safe for the common colour-vision deficiencies). */
export const OKABE_ITO = {
  orange: "#E69F00", sky: "#56B4E9", green: "#009E73", yellow: "#F0E442",
  blue: "#0072B2", vermillion: "#D55E00", purple: "#CC79A7", black: "#000000",
};

/** Human names of the rule and stage identifiers of the engine: its stages' labels, and the ends of every chain. */
export const STAGE_LABELS = {
  raw: "raw", greedy: "greedy", final: "final",
  ...Object.fromEntries(ENGINE.stages.map((/** @type {{ name: string, label: string }} */ st) => [st.name, st.label])),
};

/**
 * Human label for a stage or rule name.
 * @param {string} name
 * @returns {string}
 */
export function labelStage(name) {
  return STAGE_LABELS[name] ?? name;
}
