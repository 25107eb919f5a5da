//# allFunctionsCalledOnLoad
// The whole view lives in the URL query, so a link (or an iframe in a lesson)
// reproduces it exactly. Parsing never throws: a bad field keeps its default
// and adds a message the page shows.
// (Over 400 lines: one job, the URL both ways: each parameter's parsing beside its writing, so a link round-trips; the settings' own checks live in settings.js.)

import {
  NUMBER_CONTROLS, CHOICE_CONTROLS, checkNumber, makeDefaultSettings, checkChain, chainInForce, missingStages, withStage,
  parseSequenceBias, formatSequenceBias, ENGINE,
} from "./settings.js";
import { DEFAULT_THREADS, parseThreads } from "./threads.js";

/** A number control's URL parameter: the CLI flag's name where it differs from the setting's. */
const paramOf = (/** @type {{ key: string, param?: string }} */ c) => c.param ?? c.key;

/** Every panel the page knows, in display order. */
export const PANEL_KEYS = ["output", "dist", "rules", "entropy", "kv", "inside", "compare", "beam", "score", "controls", "model"];
/**
 * Panels off unless a link or a switch asks for them: "inside" makes the
 * engine compute every layer's attention and logit lens at each step;
 * "compare" runs the rules twice more on every move (an engineer's tool).
 */
const OPT_IN_PANELS = ["inside", "compare"];
/** Panels shown when the URL does not say. */
export const DEFAULT_PANELS = PANEL_KEYS.filter((k) => !OPT_IN_PANELS.includes(k));
/** Panels of an embed whose URL does not say (no model picker: the lesson fixed it). */
export const DEFAULT_EMBED_PANELS = ["output", "dist", "rules", "entropy", "controls"];

/**
 * @typedef {Object} ViewState
 * @property {string|null} model     model name; null = the default from models/index.json
 * @property {string|null} prompt    null = the model's default prompt
 * @property {Record<string, any>} settings
 * @property {string[]} panels
 * @property {boolean} embed
 * @property {number} steps          generated tokens to replay on load
 * @property {number[]|null} logits  the edited logit vector of "logits10"
 * @property {boolean} next          the panels show the next token's distribution, not the
 *                                   one the last generated token was drawn from
 * @property {{ name: string }|null} file  a model opened from the user's disk (not in links)
 * @property {string|null} lesson    the course preset shown (lessons/presets.js checks the name)
 * @property {string|null} kv    the KV cache's numbers, one of KV_TYPES; null = the model's own (f16 for a GGUF file)
 * @property {"auto"|number} threads  the engine's threads asked for (state/threads.js)
 * @property {{ a: CompareSide, b: CompareSide }} compare  the compare panel's two configurations
 */

/**
 * One side of the compare panel: the page's settings as they move
 * (dialect null), or a configuration as text in an engine's own words
 * (`dialect`: one of the engine's config_dialects() names, which the engine
 * reads, or "page": the page's own URL parameters, a snapshot of its
 * settings that no engine's words could hold exactly).
 * In a link: `a=current`, or the dialect, a colon and the text (`a=llama_cpp:--temp 0.7`).
 * @typedef {{ dialect: string|null, text: string }} CompareSide
 */

/** The sides when the link names none: the page's settings against llama.cpp's defaults. */
export const DEFAULT_COMPARE = Object.freeze({
  a: Object.freeze({ dialect: null, text: "" }),
  b: Object.freeze({ dialect: "llama_cpp", text: "" }),
});
/** The dialect of a snapshot of the page's own settings (its URL parameters). */
export const PAGE_DIALECT = "page";
/** The longest configuration text a side takes (the engine's own limit on a paste). */
export const MAX_CONFIG_CHARS = 64 * 1024;

/**
 * A side as a link writes it.
 * @param {CompareSide} side
 * @returns {string}
 */
export function formatSide(side) {
  return side.dialect === null ? "current" : `${side.dialect}:${side.text}`;
}

/**
 * A side from a link's value.
 * @param {string} raw
 * @returns {{ side: CompareSide } | { problem: string }}
 */
export function parseSide(raw) {
  if (raw === "current") return { side: { dialect: null, text: "" } };
  const m = /^([a-z][a-z0-9_]{0,23}):/.exec(raw);
  if (!m) return { problem: "must be current, or a format's name, a colon and the configuration (llama_cpp:--temp 0.7)" };
  const text = raw.slice(m[0].length);
  if (text.length > MAX_CONFIG_CHARS) return { problem: `the configuration has ${text.length.toLocaleString("en")} characters, more than ${MAX_CONFIG_CHARS.toLocaleString("en")}` };
  return { side: { dialect: m[1], text } };
}

/**
 * The settings part of a view's query (what a "page" side holds): every
 * setting that differs from the page's default, as URL parameters.
 * @param {Record<string, any>} settings
 * @returns {string} without the "?"
 */
export function formatSettingsQuery(settings) {
  const q = new URLSearchParams();
  writeSettings(q, settings);
  return q.toString();
}

/**
 * A "page" side's settings: its parameters read as a link's, from the
 * page's defaults; what was wrong with them is said, never thrown.
 * @param {string} text
 * @returns {{ settings: Record<string, any>, problems: string[] }}
 */
export function parseSettingsQuery(text) {
  const { state, problems } = parseQuery(`?${text.replace(/^\?/, "")}`);
  return { settings: state.settings, problems };
}

/**
 * Every parameter the page reads: the ones parsed here, and two read by
 * their own modules (`tour` in panels/tour.js, `bench` in main.js). Anything else
 * in a link is a typo or another page's, and is said to be ignored.
 */
export const KNOWN_PARAMETERS = new Set([
  "model", "prompt", "embed", ...NUMBER_CONTROLS.map(paramOf), ...CHOICE_CONTROLS.map((c) => c.key),
  "chain", "dry_sequence_breaker", "sequence_bias", "use_cache", "chat", "stop", "nostop", "banned", "bias", "steps", "show", "logits", "panels", "tour", "bench",
  "lesson", "kv_type", "threads", "a", "b",
]);
/** The KV cache's numbers a page may ask the engine for (the engine's list: KvPrecision::ALL). */
export const KV_TYPES = ENGINE.kv_types;
/** The parameters that may repeat: one stop string, one DRY sequence breaker each (as the CLI's flags). */
const REPEATABLE = new Set(["stop", "dry_sequence_breaker"]);

/**
 * Links the page writes (its address, the embed code) stay under this many
 * characters of query: many static hosts refuse a request line over 8 KB,
 * and the origin and path need room too.
 */
export const MAX_LINK_QUERY = 7500;

/** A name or value as a message shows it: at most 40 characters. */
const shortName = (k) => (k.length > 40 ? `${k.slice(0, 40)}…` : k);

/**
 * The problems with the parameters themselves: unknown names and names given
 * more than once (URLSearchParams.get, used below, takes the first).
 * @param {URLSearchParams} q
 * @returns {string[]}
 */
function parameterProblems(q) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const k of q.keys()) counts.set(k, (counts.get(k) ?? 0) + 1);
  const problems = [];
  const unknown = [...counts.keys()].filter((k) => !KNOWN_PARAMETERS.has(k));
  if (unknown.length) {
    const names = unknown.slice(0, 5).map(shortName).join(", ") + (unknown.length > 5 ? ` and ${unknown.length - 5} more` : "");
    problems.push(`unknown URL parameter${unknown.length > 1 ? "s" : ""} ${names}: ignored (the README lists the ones the page reads)`);
  }
  for (const [k, n] of counts) {
    if (n > 1 && KNOWN_PARAMETERS.has(k) && !REPEATABLE.has(k)) {
      problems.push(`${k} is given ${n} times; using the first (${shortName(q.get(k) ?? "")})`);
    }
  }
  return problems;
}

/**
 * A fresh view state with every default.
 * @returns {ViewState}
 */
export function makeDefaultState() {
  return { model: null, prompt: null, settings: makeDefaultSettings(), panels: DEFAULT_PANELS.slice(),
    embed: false, steps: 0, logits: null, next: false, file: null, lesson: null, kv: null,
    threads: DEFAULT_THREADS, compare: { a: { ...DEFAULT_COMPARE.a }, b: { ...DEFAULT_COMPARE.b } } };
}

/**
 * Parse a query string into a view state.
 * @param {string} search e.g. location.search
 * @returns {{ state: ViewState, problems: string[] }}
 */
export function parseQuery(search) {
  const q = new URLSearchParams(search);
  const state = makeDefaultState();
  const problems = parameterProblems(q);
  const s = state.settings;

  if (q.has("model")) {
    const m = q.get("model").trim();
    if (/^[A-Za-z0-9._-]{1,80}$/.test(m)) state.model = m;
    else problems.push(`model=${q.get("model")} is not a model name; using the default model`);
  }
  if (q.has("kv_type")) {
    const raw = q.get("kv_type");
    if (KV_TYPES.includes(raw)) state.kv = raw;
    else problems.push(`kv_type=${shortName(raw)} must be ${KV_TYPES.join(" or ")}; using the model's own`);
  }
  if (q.has("threads")) {
    const parsed = parseThreads(q.get("threads"));
    if ("problem" in parsed) problems.push(`threads=${shortName(q.get("threads"))}: ${parsed.problem}; using ${DEFAULT_THREADS}`);
    else state.threads = parsed.value;
  }
  if (q.has("prompt")) state.prompt = q.get("prompt");
  state.embed = q.get("embed") === "1" || q.get("embed") === "true";
  if (state.embed) state.panels = DEFAULT_EMBED_PANELS.slice();

  for (const c of NUMBER_CONTROLS) {
    const name = paramOf(c);
    if (!q.has(name)) continue;
    const raw = q.get(name);
    const v = raw.trim() === "" ? NaN : Number(raw);
    const msg = checkNumber(c, v);
    if (msg) problems.push(`${name}=${raw}: ${msg}; using ${c.def}`);
    else s[c.key] = v;
  }
  for (const c of CHOICE_CONTROLS) {
    if (!q.has(c.key)) continue;
    const raw = q.get(c.key);
    if (c.options.some(([v]) => v === raw)) s[c.key] = raw;
    else problems.push(`${c.key}=${raw} is not one of ${c.options.map((o) => o[0]).join(", ")}; using ${c.def}`);
  }
  if (q.has("chain")) {
    const names = q.get("chain").split(",").map((x) => x.trim()).filter(Boolean);
    const msg = checkChain(names);
    if (msg) problems.push(`chain=${shortName(q.get("chain"))}: ${msg}; using the ${s.order} preset`);
    else s.chain = names;
  }
  // one per parameter, as llama.cpp's --dry-sequence-breaker; one empty value: none
  if (q.has("dry_sequence_breaker")) s.dry_sequence_breakers = q.getAll("dry_sequence_breaker").filter((x) => x.length > 0);
  if (q.has("sequence_bias")) {
    const parsed = parseSequenceBias(q.get("sequence_bias"));
    if ("problem" in parsed) problems.push(`sequence_bias=${shortName(q.get("sequence_bias"))}: ${parsed.problem}; ignored`);
    else s.sequence_bias = parsed.value;
  }
  // A sampler the URL turns on needs its stage in the chain (the engine
  // refuses it otherwise): add it where the engines put it, and say so.
  const inForce = chainInForce(s);
  const missing = missingStages(s, inForce);
  if (missing.length) {
    s.chain = missing.reduce((chain, { stage }) => withStage(chain, stage, s.order), inForce);
    problems.push(`the chain had no ${missing.map((m) => `${m.stage} stage (for ${m.key})`).join(", ")}: added; the chain is now ${s.chain.join(", ")}`);
  }
  if (q.has("use_cache")) {
    const raw = q.get("use_cache");
    if (raw === "0" || raw === "false") s.use_cache = false;
    else if (raw === "1" || raw === "true") s.use_cache = true;
    else problems.push(`use_cache=${raw} must be 0 or 1; using 1`);
  }
  if (q.has("chat")) {
    const raw = q.get("chat");
    if (raw === "1" || raw === "true") s.chat = true;
    else if (raw === "0" || raw === "false") s.chat = false;
    else problems.push(`chat=${raw} must be 0 or 1; using 0 (plain continuation)`);
  }
  if (q.has("stop")) s.stop = q.getAll("stop").filter((x) => x.length > 0);
  if (q.has("nostop")) s.stop = [];
  if (q.has("banned")) {
    const ids = parseIdList(q.get("banned"));
    if (ids) s.banned = ids;
    else problems.push(`banned=${q.get("banned")} must be token ids separated by commas; ignored`);
  }
  if (q.has("bias")) {
    const pairs = parseBiasList(q.get("bias"));
    if (pairs) s.logit_bias = pairs;
    else problems.push(`bias=${q.get("bias")} must look like id:amount,id:amount; ignored`);
  }
  if (q.has("steps")) {
    const n = Number(q.get("steps"));
    if (Number.isInteger(n) && n >= 0 && n <= 4096) state.steps = n;
    else problems.push(`steps=${q.get("steps")} must be a whole number from 0 to 4096; using 0`);
  }
  if (q.has("show")) {
    if (q.get("show") === "next") state.next = true;
    else if (q.get("show") !== "drawn") problems.push(`show=${q.get("show")} must be next or drawn; using drawn`);
  }
  if (q.has("logits")) {
    const v = q.get("logits").split(",").map(Number);
    if (v.length === 10 && v.every((x) => Number.isFinite(x) && Math.abs(x) <= 1000)) state.logits = v;
    else problems.push(`logits=${q.get("logits")} must be 10 numbers separated by commas; using the course's vector`);
  }
  if (q.has("lesson")) {
    const name = q.get("lesson");
    if (/^[a-z0-9.-]{1,40}$/.test(name)) state.lesson = name;
    else problems.push(`lesson=${shortName(name)} is not a lesson name; ignored`);
  }
  for (const key of /** @type {const} */ (["a", "b"])) {
    if (!q.has(key)) continue;
    const parsed = parseSide(q.get(key));
    if ("problem" in parsed) problems.push(`${key}=${shortName(q.get(key))}: ${parsed.problem}; using ${formatSide(DEFAULT_COMPARE[key])}`);
    else state.compare[key] = parsed.side;
  }
  if (q.has("panels")) {
    const names = q.get("panels").split(",").map((x) => x.trim()).filter(Boolean);
    const unknown = names.filter((n) => !PANEL_KEYS.includes(n));
    const known = names.filter((n) => PANEL_KEYS.includes(n));
    if (unknown.length) problems.push(`panels: unknown ${unknown.join(", ")} (known: ${PANEL_KEYS.join(", ")})`);
    if (known.length) state.panels = known;
  }
  return { state, problems };
}

/**
 * Serialise a view state to a query string, writing only what differs from
 * the defaults so links stay short.
 * @param {ViewState} state
 * @returns {string} starting with "?" (or "" when everything is default)
 */
export function formatQuery(state) {
  const q = new URLSearchParams();
  if (state.model) q.set("model", state.model);
  if (state.kv) q.set("kv_type", state.kv);
  if ((state.threads ?? DEFAULT_THREADS) !== DEFAULT_THREADS) q.set("threads", String(state.threads));
  if (state.prompt !== null) q.set("prompt", state.prompt);
  writeSettings(q, state.settings);
  if (state.steps) q.set("steps", String(state.steps));
  if (state.steps && state.next) q.set("show", "next");
  if (state.logits) q.set("logits", state.logits.join(","));
  if (state.embed) q.set("embed", "1");
  if (state.lesson) q.set("lesson", state.lesson);
  for (const key of /** @type {const} */ (["a", "b"])) {
    const side = state.compare?.[key] ?? DEFAULT_COMPARE[key];
    if (formatSide(side) !== formatSide(DEFAULT_COMPARE[key])) q.set(key, formatSide(side));
  }
  // An embed always names its panels (its default differs from the page's).
  if (state.embed || state.panels.join(",") !== DEFAULT_PANELS.join(",")) q.set("panels", state.panels.join(","));
  const text = q.toString();
  return text ? `?${text}` : "";
}

/**
 * Every setting that differs from the page's default, as URL parameters.
 * @param {URLSearchParams} q
 * @param {Record<string, any>} settings
 */
function writeSettings(q, settings) {
  const d = makeDefaultSettings();
  for (const c of NUMBER_CONTROLS) if (settings[c.key] !== c.def) q.set(paramOf(c), String(settings[c.key]));
  for (const c of CHOICE_CONTROLS) if (settings[c.key] !== c.def) q.set(c.key, settings[c.key]);
  if (settings.chain.length) q.set("chain", settings.chain.join(","));
  if (settings.sequence_bias.length) q.set("sequence_bias", formatSequenceBias(settings.sequence_bias, ";"));
  const breakers = settings.dry_sequence_breakers;
  if (JSON.stringify(breakers) !== JSON.stringify(d.dry_sequence_breakers)) {
    if (breakers.length === 0) q.set("dry_sequence_breaker", "");
    for (const b of breakers) q.append("dry_sequence_breaker", b);
  }
  if (!settings.use_cache) q.set("use_cache", "0");
  if (settings.chat) q.set("chat", "1");
  const stops = settings.stop;
  if (JSON.stringify(stops) !== JSON.stringify(d.stop)) {
    if (stops.length === 0) q.set("nostop", "1");
    for (const st of stops) q.append("stop", st);
  }
  if (settings.banned.length) q.set("banned", settings.banned.join(","));
  if (settings.logit_bias.length) q.set("bias", settings.logit_bias.map(([i, b]) => `${i}:${b}`).join(","));
}

/**
 * What a link may leave out when it would be too long, in this order: the
 * free text first. Without its prompt a link's generated steps would replay
 * from another prompt, so they go with it.
 * @type {{ what: string, drop: (st: ViewState) => ViewState }[]}
 */
const DROPPABLE = [
  { what: "prompt", drop: (st) => ({ ...st, prompt: null, steps: 0, next: false }) },
  { what: "compared configurations", drop: (st) => ({ ...st, compare: { a: { ...DEFAULT_COMPARE.a }, b: { ...DEFAULT_COMPARE.b } } }) },
  { what: "stop strings", drop: (st) => ({ ...st, settings: { ...st.settings, stop: makeDefaultSettings().stop } }) },
  { what: "banned tokens", drop: (st) => ({ ...st, settings: { ...st.settings, banned: [] } }) },
  { what: "logit biases", drop: (st) => ({ ...st, settings: { ...st.settings, logit_bias: [] } }) },
];

/**
 * formatQuery kept under MAX_LINK_QUERY characters by leaving out, in
 * DROPPABLE's order, what makes it too long.
 * @param {ViewState} state
 * @returns {{ query: string, omitted: string[] }} omitted: what the link leaves out ([] when it holds everything)
 */
export function formatLink(state) {
  let query = formatQuery(state);
  const omitted = [];
  for (const { what, drop } of DROPPABLE) {
    if (query.length <= MAX_LINK_QUERY) break;
    const shorter = formatQuery(drop(state));
    if (shorter.length < query.length) {
      state = drop(state);
      query = shorter;
      omitted.push(what);
    }
  }
  return { query, omitted };
}

/**
 * @param {string} text "3,17,42"
 * @returns {number[]|null}
 */
function parseIdList(text) {
  if (text.trim() === "") return [];
  const ids = text.split(",").map((x) => Number(x.trim()));
  return ids.every((x) => Number.isInteger(x) && x >= 0) ? ids : null;
}

/**
 * @param {string} text "3:2.5,17:-1"
 * @returns {[number, number][]|null}
 */
function parseBiasList(text) {
  if (text.trim() === "") return [];
  const pairs = text.split(",").map((x) => x.split(":").map((y) => Number(y.trim())));
  const ok = pairs.every((p) => p.length === 2 && Number.isInteger(p[0]) && p[0] >= 0 && Number.isFinite(p[1]));
  return ok ? /** @type {[number, number][]} */ (pairs) : null;
}
