// The compare panel's controls: for each side, A and B, "the page's
// settings", "save current as" (a snapshot) and a paste box with its format;
// the runs of continuations (how many, how long, Run, Cancel). A side
// changes only when the engine reads its text (a refusal is said next to the
// box, naming the line, and the side stays as it was); the link holds both
// sides (a=, b=).

import * as store from "../state/store.js";
import { state, engineSettings } from "../state/store.js";
import { formatSettingsQuery, PAGE_DIALECT } from "../state/url.js";
import { importConfig } from "../engine/configs.js";
import { followCompare, runCompare, cancelCompare, MAX_COMPARE_RUNS, MAX_COMPARE_NEW } from "../engine/compare.js";
import { updateUrl } from "../panels/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { fillDialects } from "./config-io.js";
import { $, makeEl, setText } from "../render/dom.js";

const SIDES = /** @type {const} */ (["a", "b"]);

/**
 * One side's box: where it stands (painted by render/compare.js into
 * [data-side-info]) and its buttons and paste box.
 * @param {"a"|"b"} key
 * @returns {HTMLElement}
 */
function buildSide(key) {
  const name = key.toUpperCase();
  const fs = makeEl("fieldset", { class: `cmp-side ${key}`, "data-side": key });
  const legend = makeEl("legend");
  legend.append(makeEl("span", { class: `cmp-badge ${key}` }, name), " configuration");
  const info = makeEl("div", { class: "cmp-side-info", "data-side-info": key });
  const buttons = makeEl("div", { class: "buttons" });
  const follow = makeEl("button", { type: "button", "data-action": "follow", id: `cmp-${key}-follow`, "aria-pressed": "false",
    title: `${name} is the page's settings, following the controls as they move` }, "The page's settings");
  const save = makeEl("button", { type: "button", "data-action": "save", id: `cmp-${key}-save`,
    title: `${name} keeps the page's settings as they are now, whatever the controls do next` }, `Save current as ${name}`);
  buttons.append(follow, save);
  const paste = makeEl("details", { class: "cmp-paste" });
  const text = makeEl("textarea", { id: `cmp-${key}-text`, rows: 4, spellcheck: "false", autocomplete: "off",
    "aria-describedby": `cmp-${key}-msg` });
  const dialect = makeEl("select", { id: `cmp-${key}-dialect` });
  dialect.append(makeEl("option", { value: "" }, "auto-detect"));
  const use = makeEl("button", { type: "button", "data-action": "use", id: `cmp-${key}-use` }, `Use for ${name}`);
  const row = makeEl("div", { class: "ctl-row cfg-row" });
  row.append(makeEl("label", { for: `cmp-${key}-dialect`, class: "inline" }, "Format"), dialect, use);
  paste.append(makeEl("summary", {}, `Paste a config for ${name}…`),
    makeEl("label", { for: `cmp-${key}-text` }, `${name}'s configuration: llama.cpp flags, a generation_config.json or an OpenAI-style request body`),
    text, row, makeEl("p", { class: "msg", id: `cmp-${key}-msg`, role: "alert" }));
  fs.append(legend, info, buttons, paste);
  return fs;
}

/**
 * The side box's buttons say which source is in force, and its paste box
 * holds the side's text (unless the user is editing it).
 * @param {"a"|"b"} key
 */
function showSide(key) {
  const side = state.compare[key];
  $(`#cmp-${key}-follow`).setAttribute("aria-pressed", String(side.dialect === null));
  const text = /** @type {HTMLTextAreaElement} */ ($(`#cmp-${key}-text`));
  const dialect = /** @type {HTMLSelectElement} */ ($(`#cmp-${key}-dialect`));
  if (side.dialect !== null && side.dialect !== PAGE_DIALECT && document.activeElement !== text) {
    text.value = side.text;
    if ([...dialect.options].some((o) => o.value === side.dialect)) dialect.value = side.dialect;
  }
}

/**
 * A side becomes `side`: the link, the buttons and the panel follow.
 * @param {"a"|"b"} key
 * @param {import("../state/url.js").CompareSide} side
 */
function setSide(key, side) {
  store.setCompareSide(key, side);
  showSide(key);
  updateUrl();
  scheduleRender();
}

/** Build the panel's controls and wire them. */
export function wireCompare() {
  const box = $("#cmp-sides");
  for (const key of SIDES) {
    box.append(buildSide(key));
    fillDialects(/** @type {HTMLSelectElement} */ ($(`#cmp-${key}-dialect`)), "auto-detect", () => showSide(key));
    showSide(key);
  }
  box.addEventListener("click", async (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest?.("button[data-action]");
    const key = /** @type {"a"|"b"} */ (b?.closest("[data-side]")?.getAttribute("data-side"));
    if (!b || !key) return;
    const action = b.getAttribute("data-action");
    if (action === "follow") setSide(key, { dialect: null, text: "" });
    else if (action === "save") setSide(key, { dialect: PAGE_DIALECT, text: formatSettingsQuery(state.settings) });
    else if (action === "use") await usePaste(key);
  });

  const runs = /** @type {HTMLInputElement} */ ($("#cmp-runs"));
  const maxNew = /** @type {HTMLInputElement} */ ($("#cmp-max-new"));
  runs.max = String(MAX_COMPARE_RUNS);
  maxNew.max = String(MAX_COMPARE_NEW);
  const msg = $("#cmp-run-msg");
  /** @returns {number|null} the box's whole number within its range, else null (said) */
  const whole = (/** @type {HTMLInputElement} */ input, /** @type {string} */ what) => {
    const v = Number(input.value);
    const ok = input.value.trim() !== "" && Number.isInteger(v) && v >= Number(input.min) && v <= Number(input.max);
    input.toggleAttribute("aria-invalid", !ok);
    if (!ok) setText(msg, `${what} must be a whole number from ${input.min} to ${input.max}`);
    return ok ? v : null;
  };
  runs.addEventListener("input", () => { setText(msg, ""); scheduleRender(); });
  maxNew.addEventListener("input", () => setText(msg, ""));
  $("#btn-cmp-run").addEventListener("click", () => {
    setText(msg, "");
    const n = whole(runs, "Runs");
    const len = n === null ? null : whole(maxNew, "New tokens");
    if (n !== null && len !== null) runCompare(n, len);
  });
  $("#btn-cmp-cancel").addEventListener("click", cancelCompare);
  followCompare();
}

/**
 * The paste box's text becomes the side's, once the engine reads it; a
 * refusal is said beside the box and the side stays as it was.
 * @param {"a"|"b"} key
 */
async function usePaste(key) {
  const text = /** @type {HTMLTextAreaElement} */ ($(`#cmp-${key}-text`));
  const dialect = /** @type {HTMLSelectElement} */ ($(`#cmp-${key}-dialect`));
  const msg = $(`#cmp-${key}-msg`);
  try {
    const read = await importConfig(text.value, dialect.value, engineSettings());
    setText(msg, "");
    text.removeAttribute("aria-invalid");
    setSide(key, { dialect: read.dialect, text: text.value });
  } catch (err) {
    setText(msg, err instanceof Error ? err.message : String(err));
    text.setAttribute("aria-invalid", "true");
  }
}
