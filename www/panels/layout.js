//# allFunctionsCalledOnLoad
// Where the decoding controls sit, so the sliders and the distribution they
// change are on screen together (style.css draws the three arrangements):
//   side        (≥ 1200 px) a sticky column left of the panels, every control in it:
//                the core rules at its top, the less used ones scrolling under them;
//                "More controls" takes the keyboard there
//   bar-top     (700–1199 px) a bar sticking to the top of the viewport
//   bar-bottom  (< 700 px, phones) a bar fixed to the bottom of the viewport
// In both bars only the core rules show; "More controls" opens the rest in
// the bar (it scrolls inside it) and Escape or the button closes it again.
// This module only switches classes and one CSS variable; it draws nothing.

/** The widths where the arrangement changes; style.css uses the same numbers. */
export const SIDE_MIN_PX = 1200;
export const BAR_TOP_MIN_PX = 700;

/** @returns {"side"|"bar-top"|"bar-bottom"} */
export function layoutMode() {
  if (matchMedia(`(min-width: ${SIDE_MIN_PX}px)`).matches) return "side";
  return matchMedia(`(min-width: ${BAR_TOP_MIN_PX}px)`).matches ? "bar-top" : "bar-bottom";
}

/**
 * Wire the "More controls" button and keep <body data-layout> and the
 * --controls-bar-h variable (room left under a bottom bar) current.
 * Call once, after the controls are built.
 */
export function wireLayout() {
  const panel = /** @type {HTMLElement} */ (document.getElementById("p-controls"));
  const button = /** @type {HTMLButtonElement} */ (document.getElementById("btn-more-controls"));
  const more = /** @type {HTMLElement} */ (document.getElementById("ctl-more"));
  if (!panel || !button || !more) return;

  const setExpanded = (/** @type {boolean} */ open) => {
    panel.classList.toggle("expanded", open);
    button.setAttribute("aria-expanded", String(open));
  };
  const apply = () => {
    const mode = layoutMode();
    document.body.dataset.layout = mode;
    // In the side column everything is shown; "expanded" means nothing there.
    if (mode === "side") setExpanded(false);
  };

  button.addEventListener("click", () => {
    if (layoutMode() === "side") {
      // Already in the column, under the core rules, scrolling by itself
      // (style.css): show its start and put the keyboard on the first one;
      // the page does not move, so the core sliders and the panels stay.
      more.scrollTo({ top: 0, behavior: prefersReducedMotion() ? "auto" : "smooth" });
      /** @type {HTMLElement|null} */ (more.querySelector("input, select, textarea"))?.focus({ preventScroll: true });
      return;
    }
    setExpanded(!panel.classList.contains("expanded"));
  });
  // Escape closes an open bar and gives the keyboard back to the button.
  panel.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !panel.classList.contains("expanded")) return;
    setExpanded(false);
    button.focus();
  });

  // The page keeps room for a bar fixed to the bottom, so the last panel
  // can be scrolled out from under it.
  new ResizeObserver(() => {
    document.documentElement.style.setProperty("--controls-bar-h", `${Math.ceil(panel.getBoundingClientRect().height)}px`);
  }).observe(panel);

  for (const q of [`(min-width: ${SIDE_MIN_PX}px)`, `(min-width: ${BAR_TOP_MIN_PX}px)`]) {
    matchMedia(q).addEventListener("change", apply);
  }
  apply();
}

/** @returns {boolean} the user asked for less motion */
export function prefersReducedMotion() {
  return matchMedia("(prefers-reduced-motion: reduce)").matches;
}
