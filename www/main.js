//# allFunctionsCalledOnLoad
// The page's entry point: it boots (engine worker, controls, catalogue,
// first model). Each folder holds one side or one job:
//   controls/  what the user moves; each change goes through dispatch.js to the store
//   state/     the store (the one place the state changes), the URL and its mirror,
//              the settings' looks, the catalogue, the speed figures, lifecycle events
//   engine/    the link to the engine's worker, the rules on this thread, generation
//              (replay, step, run, rewind, preview, beam, score), loading a model
//   panels/    the frame scheduler and the painter (reads the store), messages,
//              layout, figures, the tour
//   later.js   the parts of the page loaded once the first distribution is drawn
//   render/    one pure function per panel     worker/  the engine's thread
//   lessons/   the Lessons menu and figures    bench/   timings, only with ?bench=1
//   embed/     the embed code (embed.js, the custom element, stays at the top)
// A slider move: controls/decoding.js -> controls/dispatch.js -> state/store.js
//   -> engine/generation.js (the preview) -> panels/frame.js -> panels/paint.js -> render/*.js

import { parsed, state, takeCatalogue } from "./state/store.js";
import { wireControls } from "./controls/decoding.js";
import { loadCatalogue } from "./state/catalogue.js";
import { client } from "./engine/link.js";
import { loadModel } from "./engine/model-load.js";
import { wireListButtons } from "./controls/dispatch.js";
import { wireGeneration } from "./controls/generate.js";
import { updateUrl } from "./panels/url-sync.js";
import { say } from "./panels/messages.js";
import { paintChips } from "./panels/paint.js";
import { wireModelPicker, checkModelFiles } from "./controls/model-panel.js";
import { wireToyModels } from "./controls/toy-models.js";
import { showPanels, wirePanelSwitches } from "./controls/panel-switches.js";
import { emit, on } from "./state/events.js";
import { wireLayout } from "./panels/layout.js";
import { wireThreads } from "./controls/threads.js";
import { isolate } from "./isolation.js";
import { wireStandAside } from "./engine/stand-aside.js";

// The benchmarks' bookkeeping, only when they ask for it (before anything it times).
if (new URLSearchParams(location.search).get("bench") === "1") await import("./bench/bench.js");

/** The query the page was opened with: boot rewrites the URL before later.js reads it. */
const opened = new URLSearchParams(location.search);

/**
 * The rest of the page (later.js) loads once the first distribution is drawn,
 * so its modules do not compete with the first ones for the two or more
 * cores: loaded beside the model instead, they cost the first distribution
 * what leaving them out of the first graph saved (bard, medians of 8
 * alternating cold loads: 1,116 against 1,112 ms). A model that takes longer
 * (a download, a refusal) does not hold them back more than this.
 */
const LATER_PARTS_WAIT_MS = 1000;
let laterWanted = false;

function wireLaterParts() {
  if (laterWanted) return;
  laterWanted = true;
  (laterParts ?? import("./later.js"))
    .then((m) => m.wireLater({ lessons: !lessonFirst, opened }))
    .catch((err) => say(`part of the page did not load (${err?.message ?? err}); reload the page to try again`, "error"));
}

async function boot() {
  // The worker compiles the engine while this thread reads the catalogue.
  client.startWorker();
  const cataloguePromise = loadCatalogue(new URL("./models/", import.meta.url).href);
  document.body.classList.toggle("embed", state.embed);
  for (const p of parsed.problems) say(p, "error");
  const read = await cataloguePromise;
  emit("catalogue-read");
  const linked = state.model;
  const unavailable = takeCatalogue(read);
  if (read.problem && (linked === null || !read.models.some((m) => m.name === linked))) {
    say(read.problem, "info", "catalogue");
  }
  // The catalogue (index.html preloads it) is read before the controls are
  // built, so the model's request goes out as soon as they are, not after a
  // fetch begun only now: bard's cold open to its first distribution took
  // medians of 928-973 ms against 947-1,015 ms (bench-load.mjs, 5 loads,
  // four runs of each build, alternating).
  const loading = loadModel();
  wireControls();
  wireThreads();
  wireStandAside(() => client.worker);
  wireGeneration();
  wireListButtons();
  wireModelPicker();
  wireToyModels();
  wirePanelSwitches();
  wireLayout();
  showPanels();
  paintChips();
  emit("controls-built");
  on("painted", (d) => { if (d.ready) wireLaterParts(); });
  setTimeout(wireLaterParts, LATER_PARTS_WAIT_MS);
  checkModelFiles(); // sizes and availability of the GGUF files, shown in the picker when known
  if (unavailable !== null) say(`model=${unavailable} is not available; using ${read.defaultName}`, "error");
  updateUrl();
  await loading;
}

// At once, unless the host opted in to isolation by service worker and the page reloads first (isolation.js).
await isolate();
/** A lesson in the URL sets the state the page boots with: its module comes first. */
const lessonFirst = state.lesson !== null && state.lesson !== undefined;
/** @type {Promise<typeof import("./later.js")>|null} later.js, when a lesson needed it first */
let laterParts = null;
if (lessonFirst) {
  const m = await import("./later.js");
  m.wireLessons(); // ?lesson=: the preset's view, applied before boot reads the state
  laterParts = Promise.resolve(m);
}
boot();
