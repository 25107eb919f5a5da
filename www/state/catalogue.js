//# allFunctionsCalledOnLoad
// The model catalogue: the models listed in models/index.json (trained
// model folders and GGUF files) plus the course's built-in toy models, which
// need no files.

import { isCached } from "../worker/model-cache.js";
import { ENGINE } from "./settings.js";

/**
 * @typedef {Object} ModelEntry
 * @property {string} name      the URL's model= value
 * @property {string} title
 * @property {string} blurb     one line for the picker
 * @property {string} prompt    a prompt that makes sense for it
 * @property {string} [chatPrompt] the same for chat mode
 * @property {string} [scoreText] a text to score, offered in the score panel
 * @property {number} [bytes]   the file's size, shown before loading (GGUF entries)
 * @property {string} [fetch]   the command that puts the file in place (GGUF entries)
 * @property {boolean} [chat]   it has a chat template
 * @property {{ builtin: string } | { base: string } | { gguf: string, bytes: number, version: string } | { file: string }} source
 * @property {"unknown"|"cached"|"served"|"absent"|"wrong-size"} [availability] GGUF entries: whether the file can be loaded
 */

/** Lesson 21's ten logits z1..z10, the "logits10" model's vector until it is edited. */
export const COURSE_LOGITS = ENGINE.course.logits10;

/** The course's models, built into the engine. */
export const BUILTIN_MODELS = [
  { name: "logits10", title: "Lesson 21: ten hand-written logits",
    blurb: "The lesson’s 10-class logit vector [3, 2.5, …, −1.5] over tokens t1…t10; edit it below. The context does not change it.",
    prompt: "t1", source: { builtin: "logits10" } },
  { name: "bigram-abc", title: "Lesson 18: the abcb bigram (24 parameters)",
    blurb: "Three tokens a, b, c trained on “abcb abcb …”; retrain it here and watch greedy cycle.",
    prompt: "a", scoreText: "abcbabcbabca", source: { builtin: "bigram-abc" } },
  { name: "kv-demo", title: "Lesson 21: the tiny KV-cache demo",
    blurb: "A one-head attention block with random weights, to watch the cache and count the work.",
    prompt: "abc", source: { builtin: "kv-demo" } },
];

/**
 * Read models/index.json. A missing or broken index is not an error for the
 * page: it returns the problem as a message and the built-in models still work.
 * @param {string} base URL of the models folder, ending in "/"
 * @returns {Promise<{ models: ModelEntry[], defaultName: string, problem: string|null }>}
 */
export async function loadCatalogue(base) {
  let listed = [];
  let defaultName = BUILTIN_MODELS[0].name;
  let problem = null;
  try {
    const res = await fetch(`${base}index.json`);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const index = await res.json();
    if (!Array.isArray(index.models)) throw new Error("it has no models list");
    const folder = new URL(base, location.href);
    listed = index.models.map((m) => toEntry(m, folder)).filter((m) => m !== null);
    if (typeof index.default === "string" && listed.some((m) => m.name === index.default)) defaultName = index.default;
    else if (listed.length) defaultName = listed[0].name;
  } catch (err) {
    problem = `No trained model is available (models/index.json: ${err.message}). The course's built-in models work without files.`;
  }
  return { models: [...listed, ...BUILTIN_MODELS], defaultName, problem };
}

/**
 * One entry of models/index.json: a trained model folder ({ path: ".../model.json" })
 * or a GGUF file ({ gguf: "...gguf", bytes }); anything else is skipped.
 * @param {any} m
 * @param {URL} folder
 * @returns {ModelEntry|null}
 */
function toEntry(m, folder) {
  if (!m || typeof m.name !== "string") return null;
  const common = {
    name: m.name, title: m.title || m.name,
    prompt: typeof m.prompt === "string" ? m.prompt : "Once upon a time",
    ...(typeof m.chat_prompt === "string" ? { chatPrompt: m.chat_prompt } : {}),
    ...(typeof m.score_text === "string" ? { scoreText: m.score_text } : {}),
  };
  if (typeof m.path === "string") {
    return { ...common, blurb: m.blurb || "A decoder-only transformer trained for this course.",
      source: { base: new URL(m.path.replace(/model\.json$/, ""), folder).href } };
  }
  if (typeof m.gguf === "string") {
    const bytes = Number.isSafeInteger(m.bytes) && m.bytes > 0 ? m.bytes : undefined;
    return { ...common, blurb: m.blurb || "A GGUF model.", bytes, chat: m.chat === true,
      fetch: typeof m.fetch === "string" ? m.fetch : undefined, availability: "unknown",
      // The size is the cache version: a different file under the same name is fetched again.
      source: { gguf: new URL(m.gguf, folder).href, bytes: bytes ?? 0, version: `b${bytes ?? "?"}` } };
  }
  return null;
}

/**
 * Whether a GGUF entry's file can be loaded: already in the browser's cache
 * (no request at all), or served (a HEAD request; its size is checked
 * against the catalogue's). Sets and returns entry.availability.
 * @param {ModelEntry} entry
 * @returns {Promise<NonNullable<ModelEntry["availability"]>>}
 */
export function checkAvailability(entry) {
  let check = checks.get(entry);
  if (!check) { check = askAvailability(entry); checks.set(entry, check); }
  return check;
}

/** One question per entry and page load. @type {WeakMap<ModelEntry, Promise<any>>} */
const checks = new WeakMap();

/** @param {ModelEntry} entry */
async function askAvailability(entry) {
  const src = /** @type {{ gguf: string, bytes: number, version: string }} */ (entry.source);
  if (await isCached(src.gguf, src.version)) return (entry.availability = "cached");
  try {
    const res = await fetch(src.gguf, { method: "HEAD", cache: "no-store" });
    if (!res.ok) return (entry.availability = "absent");
    const length = Number(res.headers.get("content-length"));
    if (entry.bytes && length && length !== entry.bytes) return (entry.availability = "wrong-size");
    return (entry.availability = "served");
  } catch {
    return (entry.availability = "absent");
  }
}

/**
 * The picker's label for an entry: its title, and for a file its size and
 * whether it can be loaded.
 * @param {ModelEntry} entry
 * @returns {string}
 */
export function pickerLabel(entry) {
  if (!("gguf" in entry.source)) return entry.title;
  const size = entry.bytes ? `${(entry.bytes / 1e6).toFixed(1)} MB` : "size unknown";
  switch (entry.availability) {
    case "cached": return `${entry.title} (${size}, in your browser's cache)`;
    case "served": return `${entry.title} (${size} download)`;
    case "absent": return `${entry.title} (${size}; not on this server: run ${entry.fetch ?? "its fetch script"})`;
    case "wrong-size": return `${entry.title} (the file on this server is not the expected ${size}: run ${entry.fetch ?? "its fetch script"} again)`;
    default: return `${entry.title} (${size})`;
  }
}
