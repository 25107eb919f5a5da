// The first-visit tour: six short cards, each pointing at one part of the
// page (the part gets an outline and is scrolled into view). It is a
// non-modal card fixed to a corner: the page stays usable under it, nothing is
// dimmed, and Escape, "Skip tour" or "Done" close it. Once closed it is
// remembered in localStorage and does not come back by itself; the "?" button
// (or the ? key) opens it again.
//
// When it starts by itself (shouldAutoStart):
//   ?tour=0       never                ?tour=1   on a first visit, even in an embed
//   otherwise     on a first visit, but not in embed mode (the lesson around the
//                 iframe is the teacher's) and not in a browser driven by automation
//                 (navigator.webdriver: the tests and the screenshot script open a
//                 fresh profile every time, and none of them is a first visit)

import { makeEl } from "../render/dom.js";

/** The localStorage key that remembers a finished or skipped tour. */
export const TOUR_KEY = "ntp-tour-done";

/** @type {{ target: string, title: string, text: string }[]} */
export const TOUR_STEPS = [
  { target: "#p-dist", title: "The next-token distribution",
    text: "The model gives every token a probability. Pale bars: its own (raw) softmax; dark bars: what is left after the rules, what the next token is drawn from." },
  { target: "#p-rules", title: "Which tokens each rule keeps",
    text: "Each rule alone on the left, the whole pipeline in order on the right. Move temperature, top-k, top-p or min-p and watch the columns change." },
  { target: "#p-entropy", title: "Entropy",
    text: "How unsure the model is, in bits. The curve shows it for every temperature at once; the dot is where you are." },
  { target: "#p-kv", title: "The KV cache",
    text: "Each new token reuses the keys and values of the earlier ones. Untick the cache to see how much more work the model does without it, for the same numbers." },
  { target: "#p-output .buttons", title: "Generate",
    text: "Step draws one token (key S), Run keeps going (R), Step back takes one back (B). Each token is tinted by its probability; hover or focus it for the number." },
  { target: "#p-model", title: "Share and embed",
    text: "The link in the address bar reproduces this view. Copy embed code gives an iframe for a lesson. Press ? any time for this tour again." },
];

/** @type {{ card: HTMLElement, index: number, returnFocus: HTMLElement|null }|null} */
let open = null;

/**
 * @param {URLSearchParams} query
 * @param {{ embed: boolean, done: boolean, automated: boolean }} facts
 * @returns {boolean}
 */
export function shouldAutoStart(query, { embed, done, automated }) {
  const asked = query.get("tour");
  if (asked === "0" || done) return false;
  if (asked === "1") return true;
  return !embed && !automated;
}

/** @returns {boolean} the tour was finished or skipped in this browser */
function isDone() {
  try { return localStorage.getItem(TOUR_KEY) === "1"; } catch { return false; } // storage off: ask every time
}

function remember() {
  try { localStorage.setItem(TOUR_KEY, "1"); } catch { /* storage off: nothing to remember in */ }
}

/**
 * Wire the "?" button and start the tour if this is a first visit.
 * @param {{ embed: boolean, query?: URLSearchParams }} opts query: the URL's as the page was opened
 */
export function wireTour({ embed, query = new URLSearchParams(location.search) }) {
  document.getElementById("btn-tour")?.addEventListener("click", () => startTour());
  if (shouldAutoStart(query, { embed, done: isDone(), automated: navigator.webdriver === true })) startTour({ auto: true });
}

/**
 * Open the tour at its first card (or restart it).
 * @param {{ auto?: boolean }} [opts] auto: started by the page, not by the user; the
 *   keyboard focus then stays where it is, so a first visit is not hijacked
 */
export function startTour({ auto = false } = {}) {
  const returnFocus = /** @type {HTMLElement|null} */ (document.activeElement);
  closeTour({ remember: false });
  const card = makeEl("section", { class: "tour", id: "tour", role: "dialog", "aria-modal": "false",
    "aria-labelledby": "tour-title", "aria-describedby": "tour-text", tabindex: "-1" });
  card.append(
    makeEl("p", { class: "tour-count", id: "tour-count" }),
    makeEl("h2", { id: "tour-title" }),
    makeEl("p", { id: "tour-text" }),
  );
  const buttons = makeEl("div", { class: "buttons" });
  const back = makeEl("button", { type: "button", "data-tour": "back" }, "Back");
  const next = makeEl("button", { type: "button", class: "primary", "data-tour": "next" }, "Next");
  const skip = makeEl("button", { type: "button", "data-tour": "skip" }, "Skip tour");
  buttons.append(back, next, skip);
  card.append(buttons);
  back.addEventListener("click", () => show(open.index - 1));
  next.addEventListener("click", () => (open.index === TOUR_STEPS.length - 1 ? closeTour() : show(open.index + 1)));
  skip.addEventListener("click", () => closeTour());
  card.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); closeTour(); } });
  document.body.append(card);
  open = { card, index: 0, returnFocus: auto ? null : returnFocus };
  show(0);
  if (!auto) card.focus();
}

/**
 * Show card i: its text, and its part of the page outlined and in view.
 * @param {number} i
 */
function show(i) {
  if (!open) return;
  const steps = TOUR_STEPS;
  open.index = Math.max(0, Math.min(steps.length - 1, i));
  const step = steps[open.index];
  const { card } = open;
  card.querySelector("#tour-count").textContent = `Tour ${open.index + 1} of ${steps.length}`;
  card.querySelector("#tour-title").textContent = step.title;
  card.querySelector("#tour-text").textContent = step.text;
  /** @type {HTMLButtonElement} */ (card.querySelector("[data-tour=back]")).disabled = open.index === 0;
  card.querySelector("[data-tour=next]").textContent = open.index === steps.length - 1 ? "Done" : "Next";
  for (const el of document.querySelectorAll(".tour-target")) el.classList.remove("tour-target");
  const target = /** @type {HTMLElement|null} */ (document.querySelector(step.target));
  // A panel the embed does not show: the card says its piece without pointing.
  if (target && target.checkVisibility()) {
    target.classList.add("tour-target");
    // At once, not smoothly: the card's corner is chosen from where the target lands.
    if (document.body.dataset.layout === "bar-bottom") {
      // A phone: the card holds the top, the controls bar the bottom; the
      // target starts just under the card.
      target.style.scrollMarginTop = `${Math.ceil(card.getBoundingClientRect().height) + 16}px`;
      target.scrollIntoView({ block: "start" });
      target.style.scrollMarginTop = "";
    } else {
      target.scrollIntoView({ block: "nearest" });
    }
    placeAwayFrom(card, target.getBoundingClientRect());
  } else {
    placeAwayFrom(card, null);
  }
}

/** The corners the card may sit in (style.css's .tour.at-* classes). */
const CORNERS = ["bottom-right", "top-right", "bottom-left", "top-left"];

/**
 * Put the card in the corner where it covers least of the target, so it
 * never hides the part it talks about (on a phone it stays on top, clear of
 * the controls bar).
 * @param {HTMLElement} card
 * @param {DOMRect|null} target
 */
function placeAwayFrom(card, target) {
  let best = CORNERS[0];
  let bestOverlap = Infinity;
  for (const corner of CORNERS) {
    for (const c of CORNERS) card.classList.toggle(`at-${c}`, c === corner);
    if (!target) return;
    const r = card.getBoundingClientRect();
    const overlap = Math.max(0, Math.min(r.right, target.right) - Math.max(r.left, target.left)) *
      Math.max(0, Math.min(r.bottom, target.bottom) - Math.max(r.top, target.top));
    if (overlap < bestOverlap) { best = corner; bestOverlap = overlap; }
    if (overlap === 0) break;
  }
  for (const c of CORNERS) card.classList.toggle(`at-${c}`, c === best);
}

/**
 * Close the tour (and by default remember it is done).
 * @param {{ remember?: boolean }} [opts]
 */
export function closeTour({ remember: keep = true } = {}) {
  if (!open) return;
  for (const el of document.querySelectorAll(".tour-target")) el.classList.remove("tour-target");
  const { card, returnFocus } = open;
  open = null;
  const hadFocus = card.contains(document.activeElement);
  card.remove();
  if (keep) remember();
  // The keyboard goes back where it was (or to the "?" button that reopens it).
  if (hadFocus) (returnFocus?.isConnected ? returnFocus : document.getElementById("btn-tour"))?.focus();
}
