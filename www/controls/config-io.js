// Paste a decoding configuration in an engine's own words (llama.cpp's
// flags, a Hugging Face generation_config.json, an OpenAI-style request
// body) and put it in force, or write the settings in force in each of them:
// a group of its own at the end of "More controls". An import goes through
// the one settings path (dispatch.js onSettings: the store, the form, the
// chain builder, the URL, the preview); a refusal leaves every setting as it
// was and says, next to the box, on which line the engine stopped.

import { engineSettings } from "../state/store.js";
import { fromEngineSettings } from "../state/settings.js";
import { importConfig, exportConfig, configDialects, whenConfigEngine } from "../engine/configs.js";
import { onUrlWritten } from "../panels/url-sync.js";
import { onSettings } from "./dispatch.js";
import { $, makeEl, setText } from "../render/dom.js";
import { importReport, noteText } from "../render/compare.js";

/**
 * Fill a dialect select from the engine's list once its module is here.
 * @param {HTMLSelectElement} select
 * @param {string|null} detect the label of a "detect" option ("" value), or null for none
 * @param {(d: { name: string, label: string, placeholder: string }[]) => void} [then]
 */
export function fillDialects(select, detect, then) {
  whenConfigEngine(() => {
    configDialects().then((dialects) => {
      const keep = select.value;
      select.replaceChildren(...(detect === null ? [] : [makeEl("option", { value: "" }, detect)]),
        ...dialects.map((d) => makeEl("option", { value: d.name }, d.label)));
      if ([...select.options].some((o) => o.value === keep)) select.value = keep;
      select.disabled = false;
      then?.(dialects);
    }).catch((err) => { select.title = err?.message ?? String(err); });
  });
}

/** Build the group in "More controls" and wire it. Call after the decoding controls are built. */
export function wireConfigIo() {
  const more = $("#ctl-more");
  const fs = makeEl("fieldset", { class: "ctl-group ctl-config", id: "ctl-config" });
  fs.append(makeEl("legend", {}, "Paste or export a config"));

  // Import
  const text = /** @type {HTMLTextAreaElement} */ (makeEl("textarea", { id: "cfg-text", rows: 4, spellcheck: "false",
    autocomplete: "off", "aria-describedby": "cfg-msg cfg-help" }));
  const dialect = /** @type {HTMLSelectElement} */ (makeEl("select", { id: "cfg-dialect" }));
  dialect.append(makeEl("option", { value: "" }, "auto-detect"));
  const importBtn = makeEl("button", { type: "button", id: "btn-cfg-import" }, "Import");
  const msg = makeEl("p", { class: "msg", id: "cfg-msg", role: "alert" });
  const result = makeEl("div", { class: "cfg-result", id: "cfg-result", role: "status" });
  const importBox = makeEl("div", { class: "ctl" });
  const importRow = makeEl("div", { class: "ctl-row cfg-row" });
  importRow.append(makeEl("label", { for: "cfg-dialect", class: "inline" }, "Format"), dialect, importBtn);
  importBox.append(makeEl("label", { for: "cfg-text" }, "Paste a config…"), text, importRow, msg, result,
    makeEl("small", { class: "help", id: "cfg-help" },
      "llama.cpp's flags, a generation_config.json or an OpenAI-style request body: it becomes the settings in force; what it does not say keeps its engine's default."));

  // Export
  const exportDialect = /** @type {HTMLSelectElement} */ (makeEl("select", { id: "cfg-export-dialect", disabled: "" }));
  exportDialect.append(makeEl("option", { value: "" }, "…"));
  const exportBtn = makeEl("button", { type: "button", id: "btn-cfg-export" }, "Export");
  const out = /** @type {HTMLTextAreaElement} */ (makeEl("textarea", { id: "cfg-export-text", rows: 4, readonly: "", spellcheck: "false",
    "aria-label": "the settings in force, exported", hidden: "" }));
  const copyBtn = makeEl("button", { type: "button", id: "btn-cfg-copy", hidden: "" }, "Copy");
  const copyMsg = makeEl("span", { class: "help", id: "cfg-copy-msg", role: "status" });
  const exportNotes = makeEl("div", { class: "cfg-result", id: "cfg-export-notes" });
  const exportMsg = makeEl("p", { class: "msg", id: "cfg-export-msg", role: "alert" });
  const exportBox = makeEl("div", { class: "ctl" });
  const exportRow = makeEl("div", { class: "ctl-row cfg-row" });
  exportRow.append(exportDialect, exportBtn);
  const copyRow = makeEl("div", { class: "buttons" });
  copyRow.append(copyBtn, copyMsg);
  exportBox.append(makeEl("label", { for: "cfg-export-dialect" }, "Export the settings in force as"), exportRow, exportMsg, out, copyRow, exportNotes);

  fs.append(importBox, exportBox);
  more.append(fs);

  fillDialects(dialect, "auto-detect", (dialects) => {
    const placeholder = () => { text.placeholder = dialects.find((d) => d.name === dialect.value)?.placeholder ?? dialects[0]?.placeholder ?? ""; };
    dialect.addEventListener("change", placeholder);
    placeholder();
  });
  fillDialects(exportDialect, null);
  // The first touch of the group loads the engine here if no model has yet.
  fs.addEventListener("focusin", () => whenConfigEngine(() => {}), { once: true });

  importBtn.addEventListener("click", async () => {
    let read;
    try {
      read = await importConfig(text.value, dialect.value, engineSettings());
    } catch (err) {
      setText(msg, err instanceof Error ? err.message : String(err));
      text.setAttribute("aria-invalid", "true");
      result.replaceChildren();
      return;
    }
    setText(msg, "");
    text.removeAttribute("aria-invalid");
    const changed = onSettings(fromEngineSettings(read.settings));
    const head = makeEl("p", { class: "cfg-head" },
      `Imported, read as ${read.read_as}: ${changed.length ? `${changed.length} setting${changed.length > 1 ? "s" : ""} changed (${changed.join(", ")})` : "no setting changed"}.`);
    result.replaceChildren(head, ...importReport(read.filled ?? [], read.notes ?? []));
  });

  /** Write the settings in force in the chosen dialect. */
  const doExport = async () => {
    if (!exportDialect.value) return;
    try {
      const r = await exportConfig(engineSettings(), exportDialect.value);
      setText(exportMsg, "");
      out.value = r.text;
      out.hidden = false;
      copyBtn.hidden = false;
      const label = exportDialect.selectedOptions[0]?.textContent ?? r.dialect;
      exportNotes.replaceChildren(...(r.notes.length ? [makeEl("p", { class: "cfg-head" }, `What ${label} cannot say (${r.notes.length}):`),
        (() => { const ul = makeEl("ul", { class: "cfg-list cfg-notes" }); for (const n of r.notes) ul.append(makeEl("li", { "data-key": n.key }, noteText(n))); return ul; })()]
        : [makeEl("p", { class: "cfg-head" }, `${label} says every setting in force.`)]));
    } catch (err) {
      setText(exportMsg, err instanceof Error ? err.message : String(err));
    }
  };
  exportBtn.addEventListener("click", doExport);
  exportDialect.addEventListener("change", () => { if (!out.hidden) doExport(); });
  // A shown export follows the settings (every change writes the URL).
  onUrlWritten(() => { if (!out.hidden) doExport(); });

  copyBtn.addEventListener("click", async () => {
    out.select();
    try {
      await navigator.clipboard.writeText(out.value);
      setText(copyMsg, "Copied.");
    } catch {
      setText(copyMsg, "Selected: copy it with Ctrl+C (the clipboard is not available here).");
    }
  });
}
