// Keyboard shortcuts for the generation buttons: S Step, R Run/Stop, B Step
// back, X Reset, ? the tour. Each button names its key in its tooltip and in
// aria-keyshortcuts (index.html). A shortcut presses the button itself, so a
// disabled button stays disabled and the button's own handler does the work.
// Nothing fires while the user types: in a text box, a number box, a select
// or an editable element the letters are the user's; with Ctrl, Alt or Meta
// held they are the browser's.

/** key (as KeyboardEvent.key, lower case) → the button it presses */
export const SHORTCUTS = { s: "#btn-step", r: "#btn-run", b: "#btn-back", x: "#btn-reset", "?": "#btn-tour" };

/**
 * Whether a key press belongs to what has focus (typing) rather than to the page.
 * @param {EventTarget|null} target
 * @returns {boolean}
 */
export function isTyping(target) {
  const el = /** @type {HTMLElement|null} */ (target);
  if (!el || !el.tagName) return false;
  if (el.isContentEditable) return true;
  if (el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  if (el.tagName !== "INPUT") return false;
  // Sliders, checkboxes and buttons take no letters: a shortcut may fire there.
  const type = /** @type {HTMLInputElement} */ (el).type;
  return !["range", "checkbox", "radio", "button", "submit", "reset", "file", "color"].includes(type);
}

/** Listen for the shortcuts on the whole page. */
export function wireKeyboard() {
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey || e.repeat || e.defaultPrevented) return;
    if (isTyping(e.target)) return;
    const sel = SHORTCUTS[/** @type {keyof typeof SHORTCUTS} */ (e.key.length === 1 ? e.key.toLowerCase() : "")];
    if (!sel) return;
    const button = /** @type {HTMLButtonElement|null} */ (document.querySelector(sel));
    // A hidden panel's buttons (e.g. an embed without the output) take no keys.
    if (!button || button.disabled || !button.checkVisibility()) return;
    e.preventDefault();
    button.click();
  });
}
