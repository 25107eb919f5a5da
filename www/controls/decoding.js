//# allFunctionsCalledOnLoad
// Panel 7: the decoding controls, built from the table in state/settings.js.
// Every number has a slider and a number box (both keyboard-operable); a value
// out of range is refused with a message next to the control and the last
// good value stays in force.

import {
  NUMBER_CONTROLS, CHOICE_CONTROLS, checkNumber, parseStopText, formatStopText,
  chainInForce, presetChain, missingStages, strandedSettings, withStage, ENGINE, parseSequenceBias, formatSequenceBias,
} from "../state/settings.js";
import { $, makeEl, setText } from "../render/dom.js";
import { buildChainEditor } from "./chain.js";
import { labelStage } from "../render/format.js";
import { state, view, subscribe } from "../state/store.js";
import { onSetting } from "./dispatch.js";

const GROUPS = [
  ["rules", "Sampling rules"],
  ["penalties", "Penalties, bans and bias"],
  ["chain", "Chain: the stages in order"],
  ["samplers", "More truncations: typical, ε, η, top-n-σ, XTC"],
  ["repeats", "Repeats: DRY and n-grams"],
  ["mirostat", "Mirostat"],
  ["run", "Generation"],
  ["beam", "Beam search"],
];

/**
 * The groups a student moves while watching the distribution (temperature,
 * top-k, top-p, min-p and the order): always on screen. The others sit after
 * a "More controls" button (panels/layout.js decides what the button does on each
 * screen). A layout mapping of its own, so the settings table needs no field for it.
 */
export const CORE_GROUPS = new Set(["rules"]);

/**
 * @typedef {Object} ControlsApi
 * @property {(settings: Record<string, any>) => void} show   reflect settings in the form
 * @property {(vocabSize: number) => void} setVocab            top-k's range follows the model
 */

/**
 * The page's form, in the controls panel: a valid change goes to the store
 * (dispatch.js); the form follows settings changed elsewhere and top-k's
 * range the model's vocabulary.
 */
export function wireControls() {
  const api = buildControls($("#p-controls .body"), state.settings, onSetting);
  subscribe("settings", () => api.show(state.settings));
  subscribe("model", () => { if (view.info) api.setVocab(view.info.vocab_size); });
}

/**
 * Build the form once.
 * @param {HTMLElement} root
 * @param {Record<string, any>} settings the view's settings (read as they change: the chain in force)
 * @param {(key: string, value: any, startedAt: number) => void} onChange a valid change
 *   (startedAt: the input event's timeStamp)
 * @returns {ControlsApi}
 */
export function buildControls(root, settings, onChange) {
  /** @type {Map<string, { set: (v: any) => void, msg: HTMLElement, range?: HTMLElement, num?: HTMLElement }>} */
  const fields = new Map();
  const core = makeEl("div", { class: "ctl-core", id: "ctl-core" });
  const moreButton = makeEl("button", { type: "button", class: "more-toggle", id: "btn-more-controls",
    "aria-controls": "ctl-more", "aria-expanded": "false" }, "More controls (chain, samplers, penalties…)");
  const more = makeEl("div", { class: "ctl-more", id: "ctl-more", role: "group", "aria-label": "more controls" });
  root.append(core, moreButton, more);
  const sets = new Map(GROUPS.map(([g, title]) => {
    const fs = makeEl("fieldset", { class: `ctl-group ctl-${g}` });
    fs.append(makeEl("legend", {}, title));
    (CORE_GROUPS.has(g) ? core : more).append(fs);
    return [g, fs];
  }));

  /** Says what the chain did beside the chain builder (and to a screen reader). */
  const chainNote = makeEl("p", { class: "help chain-note", id: "chain-note", role: "status" });

  /**
   * A valid change, with the chain kept in step: a setting moved from its
   * default whose stage the chain lacks gets that stage first (the engine
   * refuses a sampler that is on outside the chain), and the page says so.
   * @param {string} key @param {any} value @param {number} startedAt
   * @returns {string} what was added ("" when nothing)
   */
  const change = (key, value, startedAt) => {
    const chain = chainInForce(settings);
    const missing = missingStages({ ...settings, [key]: value }, chain);
    let said = "";
    if (missing.length) {
      const grown = missing.reduce((c, { stage }) => withStage(c, stage, settings.order), chain);
      onChange("chain", grown, startedAt);
      fields.get("chain")?.set(grown);
      chainEditor.show(grown);
      said = `${missing.map((m) => labelStage(m.stage)).join(", ")} added to the chain`;
      setText(chainNote, `${said}: ${grown.map(labelStage).join(" → ")}`);
    }
    onChange(key, value, startedAt);
    return said;
  };

  /**
   * Put a chain in force (`next`; [] = the preset `order`): settings that
   * only a stage it lacks reads go back to their default (off), and the
   * page says which.
   * @param {string[]} next @param {string} order @param {number} startedAt
   */
  const applyChain = (next, order, startedAt) => {
    const inForce = next.length ? next : presetChain(order);
    const stranded = strandedSettings(settings, inForce);
    for (const key of stranded) {
      const def = structuredClone(ENGINE.defaults[key]);
      onChange(key, def, startedAt);
      fields.get(key)?.set(def);
    }
    if (order !== settings.order) onChange("order", order, startedAt);
    onChange("chain", next, startedAt);
    fields.get("order")?.set(order);
    fields.get("chain")?.set(next);
    chainEditor.show(inForce);
    setText(chainNote, stranded.length
      ? `${stranded.join(", ")} back to off: no stage of this chain reads ${stranded.length > 1 ? "them" : "it"}`
      : "");
  };

  for (const c of NUMBER_CONTROLS) {
    const id = `ctl-${c.key}`;
    const box = makeEl("div", { class: "ctl", "data-key": c.key });
    const label = makeEl("label", { for: id }, c.label);
    const help = makeEl("small", { class: "help", id: `${id}-help` }, c.help);
    const msg = makeEl("span", { class: "msg", id: `${id}-msg`, role: "alert" });
    sets.get(c.group).append(box);
    if (c.pick) {
      // A few whole numbers with names (mirostat's version): a select.
      const select = makeEl("select", { id, "aria-describedby": `${id}-msg ${id}-help` });
      for (const [v, text] of Object.entries(c.pick)) select.append(makeEl("option", { value: v }, text));
      box.append(label, select, msg, help);
      select.addEventListener("change", (e) => { setText(msg, change(c.key, Number(select.value), e.timeStamp)); });
      fields.set(c.key, { set: (v) => { select.value = String(v); }, msg });
      continue;
    }
    const range = makeEl("input", { type: "range", min: c.min < 0 ? Math.max(c.min, -c.sliderMax) : c.min, max: c.sliderMax,
      step: c.step, "aria-label": `${c.label} slider`, id: `${id}-range`, "aria-describedby": `${id}-help`,
      "data-param": c.param ?? c.key });
    const num = makeEl("input", { type: "number", id, min: c.min, max: c.max, step: c.integer ? 1 : "any",
      inputmode: "decimal", "aria-describedby": `${id}-msg ${id}-help` });
    const row = makeEl("div", { class: "ctl-row" });
    // The seed re-runs the model (same seed, same text), so it gets no
    // slider: a slider move must never run the model.
    if (c.noSlider) row.append(num); else row.append(range, num);
    box.append(label, row, msg, help);

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
      setText(msg, change(c.key, v, startedAt));
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
    // The order names a preset chain: choosing one puts that chain in force;
    // while the user's own chain is in force, the box says so.
    if (c.key === "order") {
      select.addEventListener("change", (e) => applyChain([], select.value, e.timeStamp));
      const own = makeEl("small", { class: "help", id: "ctl-order-own", hidden: "" }, "your own chain is in force (More controls)");
      select.setAttribute("aria-describedby", own.id);
      box.append(own);
      fields.set("chain", { set: (v) => { own.hidden = v.length === 0; }, msg: makeEl("span") });
    }
    else select.addEventListener("change", (e) => change(c.key, select.value, e.timeStamp));
    fields.set(c.key, { set: (v) => { select.value = v; }, msg: makeEl("span") });
  }

  // The chain builder.
  const chainEditor = buildChainEditor(sets.get("chain"), chainInForce(settings), {
    onChain: (next, startedAt) => {
      // The order's own preset again: said as the order alone (a shorter link).
      const same = next.length === presetChain(settings.order).length && next.every((n, i) => n === presetChain(settings.order)[i]);
      applyChain(same ? [] : next, settings.order, startedAt);
    },
    onPreset: (order, startedAt) => applyChain([], order, startedAt),
  });
  sets.get("chain").append(chainNote);

  // Stop strings, and DRY's sequence breakers: one per line, escapes for newline and tab.
  for (const [key, group, label, helpText] of [
    ["stop", "run", "Stop strings", "one per line; write a newline as \\n"],
    ["dry_sequence_breakers", "repeats", "DRY sequence breakers", "one per line (\\n: newline): a token holding one ends a repeat"],
  ]) {
    const id = `ctl-${key}`;
    const box = makeEl("div", { class: "ctl", "data-key": key });
    const area = makeEl("textarea", { id, rows: 2, spellcheck: "false", "aria-describedby": `${id}-help` });
    box.append(makeEl("label", { for: id }, label), area, makeEl("small", { class: "help", id: `${id}-help` }, helpText));
    sets.get(group).append(box);
    area.addEventListener("change", (e) => change(key, parseStopText(area.value), e.timeStamp));
    fields.set(key, { set: (v) => { if (document.activeElement !== area) area.value = formatStopText(v); }, msg: makeEl("span") });
  }
  // Hugging Face's sequence bias: a bias on the token that completes a listed sequence.
  {
    const box = makeEl("div", { class: "ctl", "data-key": "sequence_bias" });
    const area = makeEl("textarea", { id: "ctl-sequence_bias", rows: 2, spellcheck: "false",
      "aria-describedby": "ctl-sequence_bias-msg ctl-sequence_bias-help" });
    const msg = makeEl("span", { class: "msg", id: "ctl-sequence_bias-msg", role: "alert" });
    box.append(makeEl("label", { for: "ctl-sequence_bias" }, "Sequence bias"), area, msg,
      makeEl("small", { class: "help", id: "ctl-sequence_bias-help" }, "one a line: token ids, a colon, the bias added to the token that completes them (3 17: 1.5)"));
    sets.get("penalties").append(box);
    let good = settings.sequence_bias;
    area.addEventListener("change", (e) => {
      const parsed = parseSequenceBias(area.value);
      if ("problem" in parsed) { setText(msg, `${parsed.problem}; keeping the last good list`); area.setAttribute("aria-invalid", "true"); return; }
      area.removeAttribute("aria-invalid");
      good = parsed.value;
      setText(msg, change("sequence_bias", good, e.timeStamp));
    });
    area.addEventListener("blur", () => { if (area.getAttribute("aria-invalid") !== "true") area.value = formatSequenceBias(good); });
    fields.set("sequence_bias", { set: (v) => { good = v; if (document.activeElement !== area) area.value = formatSequenceBias(v); }, msg });
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
    show(s) {
      for (const [key, f] of fields) if (key in s) f.set(s[key]);
      chainEditor.show(chainInForce(s));
    },
    setVocab(vocab) {
      const f = fields.get("top_k");
      f.range.max = String(Math.min(50, vocab));
      f.num.max = String(vocab);
    },
  };
  api.show(settings);
  return api;
}
