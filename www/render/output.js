//# allFunctionsCalledOnLoad
// Panel 1: the prompt and the generated text, each generated token tinted by
// the probability it had when it was drawn. A chat template's special tokens
// (<|im_start|>, <|im_end|>) are shown as tokens, dimmed.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { colourForProb, formatProb } from "./format.js";
import ENGINE from "../state/engine-settings.js";

/**
 * @typedef {Object} OutputView
 * @property {{ id: number, text: string, display: string, special?: boolean }[]} promptTokens
 * @property {{ id: number, text: string, display: string, prob: number, rank: number, special?: boolean }[]} generated
 * @property {string|null} stop       why generation stopped, if it did
 * @property {boolean} running
 */

/** Why a generation stopped, in words: the engine's reasons from its table, and the page's own Stop. */
const STOP_WORDS = {
  ...Object.fromEntries(ENGINE.stop_reasons.map((r) => [r.name, `stopped: ${r.words}`])),
  user: "stopped by you",
};

/** The token each output span shows, as last written. @type {WeakMap<Element, object>} */
const paintedToken = new WeakMap();

/**
 * Paint the text panel.
 * @param {HTMLElement} root the panel body
 * @param {OutputView} view
 */
export function renderOutput(root, view) {
  const text = ensureSlot(root, "text", () => makeEl("div", { class: "out-text", "aria-live": "off" }));
  const prompt = ensureSlot(text, "prompt", () => makeEl("span", { class: "out-prompt", title: "the prompt" }));
  const gen = ensureSlot(text, "gen", () => makeEl("span", { class: "out-gen" }));
  paintPrompt(prompt, view.promptTokens);

  const spans = syncChildren(gen, view.generated.length, () =>
    makeEl("span", { class: "tok", tabindex: "0", role: "button", "data-action": "rewind" }));
  view.generated.forEach((tok, i) => {
    const el = spans[i];
    // A drawn token never changes (a rewind or a new transcript brings new
    // token objects): only the spans of new tokens are written, so a paint
    // late in a long run looks up its older tokens instead of rebuilding
    // every one's label.
    if (paintedToken.get(el) === tok) return;
    paintedToken.set(el, tok);
    setText(el, tok.text);
    const { bg, fg } = colourForProb(tok.prob);
    if (el.style.backgroundColor !== bg) { el.style.backgroundColor = bg; el.style.color = fg; }
    setAttr(el, "data-step", i);
    el.classList.toggle("special", !!tok.special);
    const label = `token ${i + 1} ${tok.special ? "(special) " : ""}${tok.display}: rank ${tok.rank}, p = ${formatProb(tok.prob)} (click to rewind here)`;
    setAttr(el, "title", label);
    setAttr(el, "aria-label", label);
    // colour is not the only carrier of the probability: focus shows it in numbers (style.css)
    setAttr(el, "data-p", `p = ${formatProb(tok.prob)}, rank ${tok.rank}`);
  });

  const status = ensureSlot(root, "status", () => makeEl("p", { class: "out-status" }));
  const n = view.generated.length;
  // A phone hides the empty output and its colour key until the first token
  // (style.css), so the distribution starts above the controls bar on load.
  root.closest(".panel")?.classList.toggle("nothing-generated", n === 0);
  let s = `${view.promptTokens.length} prompt tokens, ${n} generated`;
  if (view.running) s += " · running…";
  else if (view.stop) s += ` · ${STOP_WORDS[view.stop] ?? view.stop}`;
  setText(status, s);
}

/**
 * The prompt as runs of plain text, with each special token in a span of its own.
 * @param {Element} el
 * @param {OutputView["promptTokens"]} tokens
 */
function paintPrompt(el, tokens) {
  /** @type {{ text: string, special: boolean, id?: number }[]} */
  const runs = [];
  for (const t of tokens) {
    const last = runs[runs.length - 1];
    if (!t.special && last && !last.special) last.text += t.text;
    else runs.push({ text: t.text, special: !!t.special, id: t.id });
  }
  const spans = syncChildren(el, runs.length, () => makeEl("span"));
  runs.forEach((r, i) => {
    const span = spans[i];
    setText(span, r.text);
    setAttr(span, "class", r.special ? "tok-special" : "");
    if (r.special) setAttr(span, "title", `special token ${r.text} (id ${r.id}): part of the chat template`);
    else span.removeAttribute("title");
  });
}
