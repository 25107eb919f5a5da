// The page's entry point: it boots (engine worker, controls, catalogue,
// first model) and wires the page's controls to the modules that own each
// job. Nothing else lives here:
//   app-state.js      the view state (URL), what the panels draw, the catalogue
//   engine-link.js    the worker client, the rules on this thread, the engine's hooks
//   engine.js         the engine state machine for generation (replay, step, run,
//                     rewind, preview, beam, score)
//   model-load.js     loading a model or a file from disk, Reset, crash recovery
//   paint.js          frame scheduling and renderAll (panels in render/*.js)
//   setting-changes.js what a moved control sets off; ban/bias chips
//   url-sync.js       the URL mirror        messages.js  message area, load progress
//   model-panel.js    the model picker, a file opened from disk, the chat switch
//   gguf-open.js      "Open a GGUF file…" and drag-and-drop   score.js  the score panel's controls
//   toy-models.js     the logits editor, bigram retraining
//   panels.js         panel switches, figure buttons   embed-code.js  the iframe snippet
//   events.js         lifecycle events (bench.js, loaded only with ?bench=1, times them)
//   layout.js         where the controls sit (side column, top bar, phone bar)
//   keyboard.js       the S / R / B / X / ? shortcuts     tour.js  the first-visit tour

import { $, parsed, state, view, catalogue } from "./state/store.js";
import { buildControls } from "./controls/decoding.js";
import { loadCatalogue } from "./state/catalogue.js";
import { client, engineHooks } from "./engine/link.js";
import { replayOrSay, stopRun, doStep, doRun, doRewind, doBeam } from "./engine/generation.js";
import { loadModel, doReset } from "./engine/model-load.js";
import { onSetting, refreshChips, wireListButtons } from "./controls/dispatch.js";
import { updateUrl, onUrlWritten } from "./state/url-sync.js";
import { say } from "./panels/messages.js";
import { fillModelPicker, showModelPanel, wireModelPicker, checkModelFiles, adaptToModel, adoptFileModel, panelHooks } from "./controls/model-panel.js";
import { wireGgufOpen } from "./controls/gguf-open.js";
import { wireScore, offerScoreText } from "./controls/score-input.js";
import { wireToyModels } from "./controls/toy-models.js";
import { showPanels, wirePanelSwitches, addFigureButtons } from "./controls/panel-switches.js";
import { copyEmbed, refreshEmbedCode } from "./embed/code.js";
import { emit } from "./state/events.js";
import { wireLayout } from "./panels/layout.js";
import { wireKeyboard } from "./controls/keyboard.js";
import { wireTour } from "./panels/tour.js";
import { wireLessons } from "./lessons/lessons.js";

// The benchmarks' bookkeeping, only when they ask for it (before anything it times).
if (new URLSearchParams(location.search).get("bench") === "1") await import("./bench/bench.js");

/** @type {import("./controls/decoding.js").ControlsApi|null} */
let controls = null;

engineHooks.loaded = (info) => { controls?.setVocab(info.vocab_size); adaptToModel(info); };
engineHooks.fileLoaded = adoptFileModel;
engineHooks.loadSettled = () => { showModelPanel(); offerScoreText(); };
engineHooks.replayed = refreshChips; // token names for bans/biases from the URL are known now
onUrlWritten(refreshEmbedCode);
panelHooks.settingsChanged = () => controls?.show(state.settings);

function wire() {
  $("#btn-step").addEventListener("click", doStep);
  $("#btn-run").addEventListener("click", doRun);
  $("#btn-reset").addEventListener("click", doReset);
  $("#btn-back").addEventListener("click", () => doRewind((view.report?.generated.length ?? 0) - 1));

  // Clicking (or Enter on) a generated token rewinds to the step that drew it.
  const out = $("#p-output .body");
  const rewindFrom = (target) => {
    const tok = /** @type {HTMLElement} */ (target).closest?.("[data-action=rewind]");
    if (tok) doRewind(Number(tok.getAttribute("data-step")));
  };
  out.addEventListener("click", (e) => rewindFrom(e.target));
  out.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); rewindFrom(e.target); } });

  $("#p-beam .body").addEventListener("click", (e) => {
    if (/** @type {HTMLElement} */ (e.target).closest?.("[data-action=beam-search]")) doBeam();
  });

  let promptTimer = 0;
  $("#prompt").addEventListener("input", () => {
    clearTimeout(promptTimer);
    promptTimer = setTimeout(async () => {
      state.prompt = /** @type {HTMLTextAreaElement} */ ($("#prompt")).value;
      state.steps = 0;
      updateUrl();
      await stopRun();
      await replayOrSay();
    }, 300);
  });

  const cacheBox = /** @type {HTMLInputElement} */ ($("#ctl-use_cache"));
  cacheBox.checked = state.settings.use_cache;
  cacheBox.addEventListener("change", () => onSetting("use_cache", cacheBox.checked, performance.now()));
  $("#btn-embed").addEventListener("click", copyEmbed);

  wireListButtons();
  wireModelPicker();
  wireGgufOpen();
  wireScore();
  wireToyModels();
  wirePanelSwitches();
  addFigureButtons();
}

async function boot() {
  // The worker compiles the engine while this thread reads the catalogue.
  client.startWorker();
  const cataloguePromise = loadCatalogue(new URL("./models/", import.meta.url).href); // read while the controls are built
  document.body.classList.toggle("embed", state.embed);
  for (const p of parsed.problems) say(p, "error");
  controls = buildControls($("#p-controls .body"), state.settings, onSetting);
  wire();
  wireLayout();
  wireKeyboard();
  showPanels();
  wireTour({ embed: state.embed });
  refreshChips();
  emit("controls-built");

  Object.assign(catalogue, await cataloguePromise);
  emit("catalogue-read");
  if (catalogue.problem && (state.model === null || !catalogue.models.some((m) => m.name === state.model))) {
    say(catalogue.problem, "info", "catalogue");
  }
  fillModelPicker();
  checkModelFiles(); // sizes and availability of the GGUF files, shown in the picker when known
  if (state.model !== null && !catalogue.models.some((m) => m.name === state.model)) {
    say(`model=${state.model} is not available; using ${catalogue.defaultName}`, "error");
    state.model = null;
  }
  state.model ??= catalogue.defaultName;
  if (state.logits && state.model !== "logits10") state.logits = null;
  showModelPanel();
  updateUrl();
  await loadModel();
}

wireLessons(); // ?lesson=: the preset's view, applied before boot reads the state
boot();
