// Panel 7: the decoding controls, built from the table in state/settings.js.
// Every number has a slider and a number box (both keyboard-operable); a value
// out of range is refused with a message next to the control and the last
// good value stays in force.

import { NUMBER_CONTROLS, CHOICE_CONTROLS, checkNumber, parseStopText, formatStopText } from "./state/settings.js";
import { makeEl } from "./render/dom.js";

const GROUPS = [
  ["rules", "Sampling rules"],
  ["penalties", "Penalties, bans and bias"],
  ["run", "Generation"],
  ["beam", "Beam search"],
];

/**
 * The groups a student moves while watching the distribution (temperature,
 * top-k, top-p, min-p and the order): always on screen. The others sit after
 * a "More controls" button (layout.js decides what the button does on each
 * screen). A layout mapping of its own, so the settings table needs no field for it.
 */
export const CORE_GROUPS = new Set(["rules"]);

/**
 * @typedef {Object} ControlsApi
 * @property {(settings: Record<string, any>) => void} show   reflect settings in the form
 * @property {(vocabSize: number) => void} setVocab            top-k's range follows the model
 */

/**
 * Build the form once.
 * @param {HTMLElement} root
 * @param {Record<string, any>} settings initial values
 * @param {(key: string, value: any, startedAt: number) => void} onChange a valid change
 *   (startedAt: the input event's timeStamp)
 * @returns {ControlsApi}
 */
export function buildControls(root, settings, onChange) {
  /** @type {Map<string, { set: (v: any) => void, msg: HTMLElement }>} */
  const fields = new Map();
  const core = makeEl("div", { class: "ctl-core", id: "ctl-core" });
  const moreButton = makeEl("button", { type: "button", class: "more-toggle", id: "btn-more-controls",
    "aria-controls": "ctl-more", "aria-expanded": "false" }, "More controls (penalties, seed, stops, beams)");
  const more = makeEl("div", { class: "ctl-more", id: "ctl-more", role: "group", "aria-label": "more controls" });
  root.append(core, moreButton, more);
  const sets = new Map(GROUPS.map(([g, title]) => {
    const fs = makeEl("fieldset", { class: `ctl-group ctl-${g}` });
    fs.append(makeEl("legend", {}, title));
    (CORE_GROUPS.has(g) ? core : more).append(fs);
    return [g, fs];
  }));

  for (const c of NUMBER_CONTROLS) {
    const id = `ctl-${c.key}`;
    const box = makeEl("div", { class: "ctl", "data-key": c.key });
    const label = makeEl("label", { for: id }, c.label);
    const range = makeEl("input", { type: "range", min: c.min < 0 ? -c.sliderMax : c.min, max: c.sliderMax,
      step: c.step, "aria-label": `${c.label} slider`, id: `${id}-range` });
    const num = makeEl("input", { type: "number", id, min: c.min, max: c.max, step: c.integer ? 1 : "any",
      inputmode: "decimal", "aria-describedby": `${id}-msg ${id}-help` });
    const help = makeEl("small", { class: "help", id: `${id}-help` }, c.help);
    const msg = makeEl("span", { class: "msg", id: `${id}-msg`, role: "alert" });
    const row = makeEl("div", { class: "ctl-row" });
    // The seed re-runs the model (same seed, same text), so it gets no
    // slider: a slider move must never run the model.
    if (c.noSlider) row.append(num); else row.append(range, num);
    box.append(label, row, msg, help);
    sets.get(c.group).append(box);

    let good = settings[c.key];
    const set = (v) => { good = v; range.value = String(v); if (document.activeElement !== num) num.value = String(v); };
    const accept = (raw, from, startedAt) => {
      const v = raw.trim() === "" ? NaN : Number(raw);
      const problem = checkNumber(c, v);
      if (problem) {
        msg.textContent = `${problem}; keeping ${good}`;
        num.setAttribute("aria-invalid", "true");
        return;
      }
      msg.textContent = "";
      num.removeAttribute("aria-invalid");
      good = v;
      if (from === range) num.value = String(v); else range.value = String(v);
      onChange(c.key, v, startedAt);
    };
    // startedAt is the event's timeStamp (same clock as performance.now()):
    // the page's input-to-paint record starts when the input happened, not
    // when its handler got to run.
    range.addEventListener("input", (e) => accept(range.value, range, e.timeStamp));
    // Re-running the model on every keystroke of a seed would be wasted work:
    // such a box commits on Enter or when it loses focus.
    num.addEventListener(c.noSlider ? "change" : "input", (e) => accept(num.value, num, e.timeStamp));
    num.addEventListener("blur", () => { num.value = String(good); num.removeAttribute("aria-invalid"); });
    fields.set(c.key, { set, msg, range, num });
  }

  for (const c of CHOICE_CONTROLS) {
    const id = `ctl-${c.key}`;
    const box = makeEl("div", { class: "ctl", "data-key": c.key });
    const select = makeEl("select", { id });
    for (const [v, text] of c.options) select.append(makeEl("option", { value: v }, text));
    box.append(makeEl("label", { for: id }, c.label), select);
    sets.get(c.group).append(box);
    select.addEventListener("change", (e) => onChange(c.key, select.value, e.timeStamp));
    fields.set(c.key, { set: (v) => { select.value = v; }, msg: makeEl("span") });
  }

  // Stop strings: one per line, escapes for newline and tab.
  {
    const box = makeEl("div", { class: "ctl", "data-key": "stop" });
    const area = makeEl("textarea", { id: "ctl-stop", rows: 2, spellcheck: "false", "aria-describedby": "ctl-stop-help" });
    box.append(makeEl("label", { for: "ctl-stop" }, "Stop strings"), area,
      makeEl("small", { class: "help", id: "ctl-stop-help" }, "one per line; write a newline as \\n"));
    sets.get("run").append(box);
    area.addEventListener("change", (e) => onChange("stop", parseStopText(area.value), e.timeStamp));
    fields.set("stop", { set: (v) => { if (document.activeElement !== area) area.value = formatStopText(v); }, msg: makeEl("span") });
  }
  // Bans and biases: chips, added by clicking tokens in the distribution.
  {
    const box = makeEl("div", { class: "ctl chips-box", "data-key": "lists" });
    box.append(makeEl("span", { class: "label" }, "Banned and biased tokens"),
      makeEl("div", { class: "chips", id: "ctl-chips" }),
      makeEl("small", { class: "help" }, "click “ban” or “bias” next to a token in the distribution"));
    sets.get("penalties").append(box);
  }

  const api = {
    show(s) { for (const [key, f] of fields) if (key in s) f.set(s[key]); },
    setVocab(vocab) {
      const f = fields.get("top_k");
      f.range.max = String(Math.min(50, vocab));
      f.num.max = String(vocab);
    },
  };
  api.show(settings);
  return api;
}
