// Decoding configurations in an engine's own words, on the page's thread:
// the engine's dialects (llama.cpp's flags, Hugging Face's
// generation_config.json, an OpenAI-style request body) read into settings
// and written back (config_dialects, import_config, export_config: free
// functions of the engine's module, which need no model), and the page's own
// snapshot of its settings (its URL parameters). One reader for the
// Import box, the compare panel's sides and their links.

import { engineModule, whenEngineModule } from "./local-preview.js";
import { scheduleRender } from "../panels/frame.js";
import { PAGE_DIALECT, parseSettingsQuery } from "../state/url.js";
import { toEngineSettings } from "../state/settings.js";
import { view } from "../state/store.js";

/** The loaded model's vocabulary size: token ids a configuration names (a logit bias) are checked against it. */
const vocabSize = () => view.info?.vocab_size ?? undefined;

/** The engine's module once loaded (null until then). @type {any} */
let mod = null;
/** Why the module could not be loaded, if it could not. @type {string|null} */
let loadProblem = null;
let listening = false;

/**
 * The engine's module if it is instantiated on this thread, else null (the
 * panels are repainted when it is). Its loading is waited for (the first
 * model's vocabulary starts it with the worker's compiled engine), or
 * started with `start`.
 * @param {{ start?: boolean }} [opts]
 * @returns {any}
 */
export function configEngineNow({ start = false } = {}) {
  if (!listening) {
    listening = true;
    whenEngineModule((m) => { mod = m; scheduleRender(); });
  }
  if (!mod && start) {
    engineModule().catch((err) => {
      loadProblem = `the engine did not load on this page's thread: ${err?.message ?? err}`;
      scheduleRender();
    });
  }
  return mod;
}

/** @returns {Promise<any>} the engine's module (loaded now if nothing has loaded it) */
export async function configEngine() {
  return configEngineNow({ start: true }) ?? engineModule();
}

/**
 * Call `fn` with the engine's module once it is loaded (at once if it is),
 * without starting its loading.
 * @param {(m: any) => void} fn
 */
export function whenConfigEngine(fn) {
  configEngineNow();
  whenEngineModule(fn);
}

/**
 * Throws unless this engine build reads configurations (a www/pkg built
 * before them has no import_config).
 * @param {any} m the engine's module
 */
function needConfigs(m) {
  if (typeof m.import_config !== "function" || typeof m.export_config !== "function" || typeof m.config_dialects !== "function") {
    throw new Error("this engine build reads no configurations (no import_config): rebuild www/pkg with pkg-scripts/build");
  }
}

/**
 * The engine's dialects: name, label and a placeholder example each.
 * @returns {Promise<{ name: string, label: string, placeholder: string }[]>}
 */
export async function configDialects() {
  const m = await configEngine();
  needConfigs(m);
  return m.config_dialects();
}

/**
 * Read a configuration; throws the engine's Error (naming the line) when it refuses it.
 * @param {string} text
 * @param {string} dialect "" = detect
 * @param {object} base engine settings: what the text does not speak about is kept from them
 * @returns {Promise<{ dialect: string, read_as: string, settings: any, filled: any[], notes: any[] }>}
 */
export async function importConfig(text, dialect, base) {
  const m = await configEngine();
  needConfigs(m);
  return m.import_config(text, dialect, base, vocabSize());
}

/**
 * Write settings in a dialect.
 * @param {object} settings engine settings
 * @param {string} dialect
 * @returns {Promise<{ dialect: string, text: string, notes: { line: number, key: string, message: string }[] }>}
 */
export async function exportConfig(settings, dialect) {
  const m = await configEngine();
  needConfigs(m);
  return m.export_config(settings, dialect);
}

/**
 * @typedef {Object} SideRead  one compare side as read against the settings in force
 * @property {any} settings        engine settings (null when refused or not read yet)
 * @property {string} label        what it is, in words
 * @property {string|null} dialect the dialect it was read in (null: the page's own settings)
 * @property {{ key: string, engine_key: string, value: string, engine: string }[]} filled  what the engine's defaults filled in
 * @property {{ line: number, key: string, message: string }[]} notes
 * @property {string|null} problem why it was refused
 * @property {boolean} pending     the engine's module is still loading
 */

/** Sides read lately, by their text, dialect and the settings they were read against. @type {Map<string, SideRead>} */
const readCache = new Map();
const READ_CACHE_SIZE = 8;

/**
 * A compare side's settings: the page's settings in force, a snapshot of
 * them, or a configuration read by the engine against them (the fields its
 * dialect does not speak about are the page's). Never throws: a refusal is
 * the read's `problem`.
 * @param {import("../state/url.js").CompareSide} side
 * @param {Record<string, any>} base engine settings in force
 * @returns {SideRead}
 */
export function readSide(side, base) {
  const none = { filled: [], notes: [], problem: null, pending: false };
  if (side.dialect === null) return { ...none, settings: base, label: "the page's settings (they follow the controls)", dialect: null };
  if (side.dialect === PAGE_DIALECT) {
    const { settings, problems } = parseSettingsQuery(side.text);
    return { ...none, settings: toEngineSettings(settings), label: "a snapshot of the page's settings", dialect: PAGE_DIALECT,
      notes: problems.map((message) => ({ line: 0, key: "", message })) };
  }
  const key = `${side.dialect}\n${side.text}\n${vocabSize()}\n${JSON.stringify(base)}`;
  const known = readCache.get(key);
  if (known) return known;
  const m = configEngineNow();
  if (!m) {
    return { ...none, settings: null, label: `${side.dialect} configuration`, dialect: side.dialect, pending: !loadProblem, problem: loadProblem };
  }
  /** @type {SideRead} */
  let read;
  try {
    needConfigs(m);
    const r = m.import_config(side.text, side.dialect, base, vocabSize());
    read = { ...none, settings: r.settings, label: r.read_as, dialect: r.dialect, filled: r.filled ?? [], notes: r.notes ?? [] };
  } catch (err) {
    read = { ...none, settings: null, label: `${side.dialect} configuration`, dialect: side.dialect, problem: err instanceof Error ? err.message : String(err) };
  }
  readCache.set(key, read);
  if (readCache.size > READ_CACHE_SIZE) readCache.delete(readCache.keys().next().value);
  return read;
}
