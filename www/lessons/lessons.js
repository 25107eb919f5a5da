// The Lessons menu and the lesson panel. `?lesson=<id>` opens a preset: its
// view (model, rules, panels: presets.js) is applied before the page boots,
// any other parameter in the link winning over the preset's; the lesson
// panel then shows the caption, the lesson's numbers and its figure, all
// computed by the engine on this thread (course_lesson in a wasm instance of
// its own, so the previewer's instance is never shared).

import { state, view, applyLessonView, forgetLesson, subscribe, currentPrompt } from "../state/store.js";
import { parseQuery } from "../state/url.js";
import { say } from "../panels/messages.js";
import { $, makeEl, setText } from "../render/dom.js";
import { savePanelSvg, savePanelPng } from "../panels/figure.js";
import { PRESETS, findPreset } from "./presets.js";
// The figures (figures.js and the files it names, export.js) load only when a lesson is shown.

/** The engine for the lessons: a separate module instance (the query makes it one). */
let wasmPromise = null;
export function lessonEngine() {
  wasmPromise ??= import("../pkg/nexttoken.js?lessons").then(async (mod) => { await mod.default(); return mod; });
  return wasmPromise;
}

/**
 * A number as the lesson prints it.
 * @param {number|string} v
 * @param {number|null} decimals null: whole number with separators; -1: scientific
 */
export function formatLessonNumber(v, decimals) {
  if (typeof v === "string") return v;
  if (decimals === null) return Number.isInteger(v) ? v.toLocaleString("en-US") : String(v);
  // An exact zero reads as the lesson prints it ("H greedy : 0").
  if (v === 0) return "0";
  if (decimals < 0) return v.toExponential(2);
  return v.toFixed(decimals);
}

/** The view of a preset with the link's own parameters on top. */
function applyPreset(preset) {
  const merged = new URLSearchParams(preset.query);
  for (const [k, v] of new URLSearchParams(location.search)) merged.set(k, v);
  const { state: fresh } = parseQuery(`?${merged}`);
  applyLessonView(fresh);
}

function fillMenu() {
  const list = $("#lessons-list");
  if (!list) return;
  list.replaceChildren(...PRESETS.map((p) => {
    const li = makeEl("li");
    const a = makeEl("a", { href: `?lesson=${encodeURIComponent(p.id)}`, "data-lesson": p.id }, p.title);
    if (p.id === state.lesson) a.setAttribute("aria-current", "page");
    li.append(a);
    return li;
  }));
}

function renderNumbers(table, preset, d) {
  const rows = preset.numbers(d).map(([key, text, value, decimals]) => {
    const tr = makeEl("tr");
    tr.append(makeEl("th", { scope: "row" }, text), makeEl("td", { "data-num": key, class: typeof value === "string" ? "mono" : "num" }, formatLessonNumber(value, decimals)));
    return tr;
  });
  table.replaceChildren(...rows);
}

function figureButtons(bar, box, preset, d, saveSweepApng) {
  const svg = makeEl("button", { type: "button", class: "mini", "data-action": "figure-svg", "aria-label": "save the figure as SVG" }, "SVG");
  const png = makeEl("button", { type: "button", class: "mini", "data-action": "figure-png", "aria-label": "save the figure as PNG" }, "PNG");
  bar.append(makeEl("span", { class: "help" }, "figure:"));
  svg.addEventListener("click", () => savePanelSvg(box, `lesson-${preset.id}`));
  png.addEventListener("click", () => savePanelPng(box, `lesson-${preset.id}`).catch((e) => say(`PNG: ${e.message}`)));
  bar.append(svg, png);
  if (preset.figure === "sweep") {
    const anim = makeEl("button", { type: "button", class: "mini", "data-action": "figure-apng" }, "Animated PNG");
    anim.addEventListener("click", () => saveSweepApng(d, `lesson-${preset.id}`).catch((e) => say(`animation: ${e.message}`)));
    bar.append(anim);
  }
}

async function showLesson(preset) {
  const panel = $("#p-lesson");
  panel.hidden = false;
  document.body.classList.add("lesson-open");
  setText($("#h-lesson"), `Lesson 21: ${preset.title}`);
  const caption = $("#lesson-caption");
  caption.replaceChildren(...preset.caption.map((line) => makeEl("span", { class: "line" }, line)));
  const body = /** @type {HTMLElement} */ (panel.querySelector(".body"));
  body.dataset.ready = "0";
  try {
    const [wasm, { FIGURES }, { saveSweepApng }] = await Promise.all([lessonEngine(), import("./figures.js"), import("./export.js")]);
    const table = makeEl("table", { class: "lesson-numbers" });
    const figure = makeEl("div", { class: "lesson-figure", "data-figure": preset.figure });
    const bar = makeEl("div", { class: "fig-buttons lesson-fig-buttons" });
    const note = makeEl("p", { class: "msg", role: "status", "data-slot": "lesson-msg" });
    let data = wasm.course_lesson(preset.id);
    const ctx = {
      wasm,
      setData: (d) => { data = d; renderNumbers(table, preset, d); },
      modelInfo: () => view.info,
      inside: () => view.inside,
      follow: (/** @type {() => void} */ fn) => subscribe("inside", fn),
      prompt: currentPrompt,
      say: (text) => setText(note, text),
    };
    FIGURES[preset.figure](figure, data, ctx);
    renderNumbers(table, preset, data);
    figureButtons(bar, figure, preset, data, saveSweepApng);
    const figWrap = makeEl("div", { class: "lesson-figure-wrap" });
    figWrap.append(bar, figure, note);
    body.replaceChildren(figWrap, table);
    body.dataset.ready = "1";
  } catch (e) {
    body.replaceChildren(makeEl("p", { class: "msg" }, `this lesson could not be computed: ${e?.message ?? e}`));
    body.dataset.ready = "error";
  }
}

/**
 * The menu, and the preset of ?lesson= (called before the page boots, so the
 * preset's model and rules are the ones it loads).
 */
export function wireLessons() {
  if (state.lesson !== null && state.lesson !== undefined) {
    const preset = findPreset(state.lesson);
    if (!preset) {
      say(`lesson=${state.lesson} is not a lesson; the Lessons menu lists them`, "error");
      forgetLesson();
    } else {
      applyPreset(preset);
      showLesson(preset);
    }
  }
  fillMenu();
}
