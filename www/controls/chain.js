//# allFunctionsCalledOnLoad
// The chain builder: the stages the sampler runs, in order, as a list the
// user edits: add a stage, remove one, drag one into place, or (drag is no
// use to a keyboard or a screen reader) move it up or down with its buttons;
// three presets put back the engines' own chains. Which stages exist, what
// each preset holds and whether a chain is acceptable are the engine's
// (state/settings.js takes them from engine-settings.js); this module only
// draws the list and reports a valid edit.

import { CHAIN, checkChain, stageHelp } from "../state/settings.js";
import { makeEl, setText, setAttr } from "../render/dom.js";
import { labelStage as stageLabel } from "../render/format.js";

/**
 * @typedef {Object} ChainApi
 * @property {(chain: string[]) => void} show  reflect the chain in force
 */

/**
 * A chain with the stage at `from` moved to `to` (both indices into chain).
 * @param {string[]} chain
 * @param {number} from
 * @param {number} to
 * @returns {string[]}
 */
export function moveStage(chain, from, to) {
  const out = chain.slice();
  const [name] = out.splice(from, 1);
  out.splice(Math.max(0, Math.min(out.length, to)), 0, name);
  return out;
}

/**
 * The preset whose chain this is, or null.
 * @param {string[]} chain
 * @returns {string|null}
 */
export function presetOf(chain) {
  const hit = CHAIN.presets.find((p) => p.chain.length === chain.length && p.chain.every((n, i) => n === chain[i]));
  return hit ? hit.key : null;
}

/**
 * Build the chain builder once.
 * @param {HTMLElement} root  where it goes (a fieldset of the controls)
 * @param {string[]} chain    the chain in force
 * @param {{ onChain: (chain: string[], startedAt: number) => void, onPreset: (order: string, startedAt: number) => void }} on
 *   onChain: the user built a valid new chain; onPreset: the user chose a preset (an `order` name)
 * @returns {ChainApi}
 */
export function buildChainEditor(root, chain, on) {
  let current = chain.slice();
  const presets = makeEl("div", { class: "chain-presets", role: "group", "aria-label": "chain presets" });
  for (const p of CHAIN.presets) {
    const b = makeEl("button", { type: "button", id: `chain-preset-${p.key}`, "data-preset": p.key, "aria-pressed": "false",
      title: p.chain.map(stageLabel).join(" → ") }, p.label);
    b.addEventListener("click", (e) => {
      setText(msg, "");
      current = p.chain.slice();
      paint();
      setText(said, `${p.label}: ${p.chain.length} stages`);
      on.onPreset(p.key, e.timeStamp);
    });
    presets.append(b);
  }
  const list = makeEl("ol", { class: "chain-list", id: "chain-list", "aria-label": "stages in the order they run" });
  const addSelect = makeEl("select", { id: "chain-add", "aria-label": "stage to add" });
  const addButton = makeEl("button", { type: "button", id: "chain-add-btn" }, "Add stage");
  const addRow = makeEl("div", { class: "chain-add" });
  addRow.append(addSelect, addButton);
  // What the stage to add does, in the engine's words.
  const addHelp = makeEl("small", { class: "help", id: "chain-add-help" });
  addSelect.setAttribute("aria-describedby", addHelp.id);
  addSelect.addEventListener("change", () => setText(addHelp, stageHelp(/** @type {HTMLSelectElement} */ (addSelect).value)));
  const msg = makeEl("span", { class: "msg", id: "chain-msg", role: "alert" });
  // What a move did, for a screen reader (the list itself changes silently).
  const said = makeEl("span", { class: "sr-only", id: "chain-said", role: "status" });
  const help = makeEl("small", { class: "help", id: "chain-help" },
    "top to bottom: the order the stages run; drag a stage, or use its ↑ ↓ buttons; ✕ removes it");
  root.append(presets, list, addRow, addHelp, msg, said, help);

  /**
   * Try a new chain: the engine's rule (checkChain) decides; a refused one
   * changes nothing and says why.
   * @param {string[]} next @param {number} startedAt @param {string} [what] what to announce
   * @returns {boolean}
   */
  function commit(next, startedAt, what) {
    const problem = checkChain(next);
    if (problem) { setText(msg, `${problem}; keeping the chain as it was`); return false; }
    setText(msg, "");
    current = next;
    paint();
    if (what) setText(said, what);
    on.onChain(current.slice(), startedAt);
    return true;
  }

  /** @type {number|null} index of the stage being dragged */
  let dragFrom = null;

  function paint() {
    const rows = current.map((name, i) => {
      const label = stageLabel(name);
      const li = makeEl("li", { class: "chain-stage", draggable: "true", "data-stage": name, "data-index": i,
        title: stageHelp(name) });
      const grip = makeEl("span", { class: "grip", "aria-hidden": "true" }, "⠿");
      const text = makeEl("span", { class: "chain-name" }, label);
      const up = makeEl("button", { type: "button", class: "chain-up", id: `chain-${name}-up`, "aria-label": `move ${label} up` }, "↑");
      const down = makeEl("button", { type: "button", class: "chain-down", id: `chain-${name}-down`, "aria-label": `move ${label} down` }, "↓");
      const remove = makeEl("button", { type: "button", class: "chain-remove", id: `chain-${name}-remove`, "aria-label": `remove ${label}` }, "✕");
      if (i === 0) up.setAttribute("disabled", "");
      if (i === current.length - 1) down.setAttribute("disabled", "");
      const moveTo = (to, e, button) => {
        if (commit(moveStage(current, i, to), e.timeStamp, `${label} moved to place ${to + 1} of ${current.length}`)) {
          // the keyboard stays on the stage it moved (its button, or the other one at an end)
          const moved = list.children[to];
          const again = moved?.querySelector(`.${button}:not([disabled])`) ?? moved?.querySelector("button:not([disabled])");
          /** @type {HTMLElement|null} */ (again)?.focus();
        }
      };
      up.addEventListener("click", (e) => moveTo(i - 1, e, "chain-up"));
      down.addEventListener("click", (e) => moveTo(i + 1, e, "chain-down"));
      remove.addEventListener("click", (e) => {
        if (commit(current.filter((_, k) => k !== i), e.timeStamp, `${label} removed`)) {
          /** @type {HTMLElement|null} */ (list.children[Math.min(i, current.length - 1)]?.querySelector(".chain-remove") ?? addSelect).focus();
        }
      });
      li.addEventListener("dragstart", (e) => {
        dragFrom = i;
        e.dataTransfer?.setData("text/plain", name);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
        li.classList.add("dragging");
      });
      li.addEventListener("dragend", () => { dragFrom = null; li.classList.remove("dragging"); });
      li.addEventListener("dragover", (e) => { if (dragFrom !== null) { e.preventDefault(); li.classList.add("drop-here"); } });
      li.addEventListener("dragleave", () => li.classList.remove("drop-here"));
      li.addEventListener("drop", (e) => {
        e.preventDefault();
        li.classList.remove("drop-here");
        if (dragFrom === null || dragFrom === i) return;
        const from = dragFrom;
        dragFrom = null;
        commit(moveStage(current, from, i), e.timeStamp, `${stageLabel(current[from])} moved to place ${i + 1} of ${current.length}`);
      });
      li.append(grip, text, up, down, remove);
      return li;
    });
    list.replaceChildren(...rows);

    const absent = CHAIN.stages.filter((n) => !current.includes(n));
    addSelect.replaceChildren(...absent.map((n) => makeEl("option", { value: n }, stageLabel(n))));
    setText(addHelp, absent.length ? stageHelp(/** @type {HTMLSelectElement} */ (addSelect).value) : "");
    addButton.toggleAttribute("disabled", absent.length === 0);
    addSelect.toggleAttribute("disabled", absent.length === 0);
    const preset = presetOf(current);
    for (const b of presets.children) setAttr(b, "aria-pressed", String(b.getAttribute("data-preset") === preset));
  }

  addButton.addEventListener("click", (e) => {
    const name = /** @type {HTMLSelectElement} */ (addSelect).value;
    if (name) commit([...current, name], e.timeStamp, `${stageLabel(name)} added at the end`);
  });

  paint();
  return {
    show(next) {
      if (next.length === current.length && next.every((n, i) => n === current[i])) return;
      current = next.slice();
      setText(msg, "");
      paint();
    },
  };
}
