// Panel 1: the prompt and the generated text, each generated token tinted by
// the probability it had when it was drawn.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { colourForProb, formatProb } from "./format.js";

/**
 * @typedef {Object} OutputView
 * @property {{ id: number, text: string, display: string }[]} promptTokens
 * @property {{ id: number, text: string, display: string, prob: number, rank: number }[]} generated
 * @property {string|null} stop       why generation stopped, if it did
 * @property {boolean} running
 */

const STOP_WORDS = {
  eos: "stopped: the model emitted end-of-sequence",
  max_new: "stopped: max new tokens reached",
  stop_string: "stopped: a stop string appeared",
  context_full: "stopped: the context is full",
  user: "stopped by you",
};

/**
 * Paint the text panel.
 * @param {HTMLElement} root the panel body
 * @param {OutputView} view
 */
export function renderOutput(root, view) {
  const text = ensureSlot(root, "text", () => makeEl("div", { class: "out-text", "aria-live": "off" }));
  const prompt = ensureSlot(text, "prompt", () => makeEl("span", { class: "out-prompt", title: "the prompt" }));
  const gen = ensureSlot(text, "gen", () => makeEl("span", { class: "out-gen" }));
  setText(prompt, view.promptTokens.map((t) => t.text).join(""));

  const spans = syncChildren(gen, view.generated.length, () =>
    makeEl("span", { class: "tok", tabindex: "0", role: "button", "data-action": "rewind" }));
  view.generated.forEach((tok, i) => {
    const el = spans[i];
    setText(el, tok.text);
    const { bg, fg } = colourForProb(tok.prob);
    if (el.style.backgroundColor !== bg) { el.style.backgroundColor = bg; el.style.color = fg; }
    setAttr(el, "data-step", i);
    const label = `token ${i + 1} ${tok.display}: rank ${tok.rank}, p = ${formatProb(tok.prob)} (click to rewind here)`;
    setAttr(el, "title", label);
    setAttr(el, "aria-label", label);
  });

  const status = ensureSlot(root, "status", () => makeEl("p", { class: "out-status" }));
  const n = view.generated.length;
  let s = `${view.promptTokens.length} prompt tokens, ${n} generated`;
  if (view.running) s += " · running…";
  else if (view.stop) s += ` · ${STOP_WORDS[view.stop] ?? view.stop}`;
  setText(status, s);
}
