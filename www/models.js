// The model catalogue: the trained models listed in models/index.json plus the
// course's built-in toy models, which need no files.

/**
 * @typedef {Object} ModelEntry
 * @property {string} name
 * @property {string} title
 * @property {string} blurb     one line for the picker
 * @property {string} prompt    a prompt that makes sense for it
 * @property {{ builtin: string } | { base: string }} source
 */

/** Lesson 21's ten logits z1..z10, the "logits10" model's vector until it is edited. */
export const COURSE_LOGITS = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5];

/** The course's models, built into the engine. */
export const BUILTIN_MODELS = [
  { name: "logits10", title: "Lesson 21: ten hand-written logits",
    blurb: "The lesson’s 10-class logit vector [3, 2.5, …, −1.5] over tokens t1…t10; edit it below. The context does not change it.",
    prompt: "t1", source: { builtin: "logits10" } },
  { name: "bigram-abc", title: "Lesson 18: the abcb bigram (24 parameters)",
    blurb: "Three tokens a, b, c trained on “abcb abcb …”; retrain it here and watch greedy cycle.",
    prompt: "a", source: { builtin: "bigram-abc" } },
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
  let trained = [];
  let defaultName = BUILTIN_MODELS[0].name;
  let problem = null;
  try {
    const res = await fetch(`${base}index.json`);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const index = await res.json();
    if (!Array.isArray(index.models)) throw new Error("it has no models list");
    trained = index.models
      .filter((m) => m && typeof m.name === "string" && typeof m.path === "string")
      .map((m) => ({ name: m.name, title: m.title || m.name, blurb: m.blurb || "A decoder-only transformer trained for this course.",
        prompt: typeof m.prompt === "string" ? m.prompt : "Once upon a time",
        source: { base: new URL(m.path.replace(/model\.json$/, ""), new URL(base, location.href)).href } }));
    if (typeof index.default === "string" && trained.some((m) => m.name === index.default)) defaultName = index.default;
    else if (trained.length) defaultName = trained[0].name;
  } catch (err) {
    problem = `No trained model is available (models/index.json: ${err.message}). The course's built-in models work without files.`;
  }
  return { models: [...trained, ...BUILTIN_MODELS], defaultName, problem };
}
