// The parts of the page that the first distribution does not need: the inside,
// compare and score panels, the configurations' import and export, the
// Lessons menu and the tour, opening a GGUF file, the embed code, the figure
// buttons and the keyboard shortcuts. main.js imports this module with
// import() once the first distribution is drawn (or a second after it boots,
// whichever comes first), so the page's first module graph is 47 modules
// instead of 65. bard's cold open in headless Chromium on 2 cores, 16 cold
// loads of each page alternating: main.js ran at a median of 446 against
// 556 ms, the first distribution was drawn at 1,090 against 1,158 ms. A URL
// that opens a lesson imports this module before the page boots, since the
// lesson sets what the page starts with.
//
// Until these parts are wired the page does not call itself ready (paint.js's
// `data-ready`), so nothing waits on a control that is not there yet.

import { wireGgufOpen } from "./controls/gguf-open.js";
import { wireScore } from "./controls/score-input.js";
import { wireInside } from "./controls/inside.js";
import { wireCompare } from "./controls/compare.js";
import { wireConfigIo } from "./controls/config-io.js";
import { wireKeyboard } from "./controls/keyboard.js";
import { wireEmbedCode } from "./embed/code.js";
import { wireLessons } from "./lessons/lessons.js";
import { addFigureButtons } from "./panels/figure.js";
import { wireTour } from "./panels/tour.js";
import { renderInside } from "./render/inside.js";
import { renderScore } from "./render/score.js";
import { renderCompare } from "./render/compare.js";
import { setLaterRenderers } from "./panels/paint.js";
import { scheduleRender } from "./panels/frame.js";
import { state } from "./state/store.js";

export { wireLessons };

/**
 * Wire every part this module holds, then repaint: their panels draw
 * what the page already has, and the page says it is ready.
 * @param {{ lessons: boolean, opened: URLSearchParams }} opts lessons: wire the
 *   Lessons menu too (false where main.js did so before the page booted);
 *   opened: the URL's query as the page was opened (the page has rewritten it
 *   since), which asks for the tour
 */
export function wireLater({ lessons, opened }) {
  wireConfigIo();
  wireEmbedCode();
  wireGgufOpen();
  wireScore();
  wireInside();
  wireCompare();
  addFigureButtons();
  wireKeyboard();
  wireTour({ embed: state.embed, query: opened });
  if (lessons) wireLessons();
  setLaterRenderers({ renderInside, renderScore, renderCompare });
  scheduleRender();
}
