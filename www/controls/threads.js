//# allFunctionsCalledOnLoad
// The engine's threads, a group of its own in "More controls": a select of
// auto and 1 … this device's cores (state/threads.js). A change goes to the
// store and the URL and is told to the engine's worker (engine/threads.js);
// the model stays loaded, and the text is the same at any count. Under the
// select, what the worker answered, so the change is heard where it was made.

import * as store from "../state/store.js";
import { state, view, subscribe } from "../state/store.js";
import { AUTO_THREADS, AUTO_THREADS_MAX, autoThreadCount, threadChoices, parseThreads } from "../state/threads.js";
import { client } from "../engine/link.js";
import { tellThreads } from "../engine/threads.js";
import { updateUrl } from "../panels/url-sync.js";
import { threadsWords } from "../render/speed.js";
import { $, makeEl, setText } from "../render/dom.js";

/** Build the group in "More controls" and wire it. Call after the decoding controls are built. */
export function wireThreads() {
  const fs = makeEl("fieldset", { class: "ctl-group ctl-engine", id: "ctl-engine" });
  fs.append(makeEl("legend", {}, "Engine"));
  const select = /** @type {HTMLSelectElement} */ (makeEl("select", { id: "ctl-threads",
    "aria-describedby": "ctl-threads-now ctl-threads-help" }));
  for (const v of threadChoices()) {
    select.append(makeEl("option", { value: String(v) }, v === AUTO_THREADS ? `auto (${autoThreadCount()})` : String(v)));
  }
  select.value = String(state.threads);
  const now = makeEl("small", { class: "ctl-now", id: "ctl-threads-now", role: "status" });
  const help = makeEl("small", { class: "help", id: "ctl-threads-help" },
    `how many threads compute the model (auto: this device's cores but one, which the page keeps for itself; at most ${AUTO_THREADS_MAX}); the text is the same with any number. More than 1 needs a cross-origin isolated page.`);
  const box = makeEl("div", { class: "ctl", "data-key": "threads" });
  box.append(makeEl("label", { for: "ctl-threads" }, "Threads"), select, now, help);
  fs.append(box);
  $("#ctl-more").append(fs);

  select.addEventListener("change", () => {
    const parsed = parseThreads(select.value);
    if ("problem" in parsed) return; // every option is a valid choice
    store.setThreads(parsed.value);
    updateUrl();
    tellThreads(client);
  });
  subscribe("threads", () => {
    if (!view.threads) { setText(now, ""); return; }
    const { count, why } = threadsWords(view.threads);
    setText(now, `${count} in force${why}`);
  });
}
