// The page's link to the engine: the worker client, the rules on this thread
// (local-preview.js) fed by the worker's reports, and the hooks through which
// the rest of the page follows the engine's state.

import { EngineClient } from "./client.js";
import { LocalPreviewer } from "./local-preview.js";
import { showProgress } from "../panels/messages.js";
import { engineSettings } from "../state/store.js";

/** Told when the worker dies (model-load.js restores the model). @type {(message: string, crashed: boolean) => void} */
let diedHandler = () => {};

/** @param {(message: string, crashed: boolean) => void} fn */
export function onEngineDied(fn) {
  diedHandler = fn;
}

/**
 * What the page wires in (main.js): the parts of the page outside the engine
 * that follow its state.
 */
export const engineHooks = {
  /** A model is loaded (before its prompt is replayed); `info` is its ModelInfo. @type {(info: any) => void} */
  loaded: () => {},
  /** A GGUF file from the user's disk is loaded: it becomes the current model. @type {(name: string, info: any) => void} */
  fileLoaded: () => {},
  /** A load ended, well or not (the model panel shows the current model). @type {() => void} */
  loadSettled: () => {},
  /** A replay ended: token names for bans and biases from the URL are known now. @type {() => void} */
  replayed: () => {},
};

/**
 * The rules on this thread, fed by the worker's reports.
 * <body data-local-preview> says whether slider moves are answered here
 * (tests wait for it; the worker answers until then).
 */
export const local = new LocalPreviewer((ready) => { document.body.dataset.localPreview = String(ready); }, engineSettings);

export const client = new EngineClient(new URL("../worker/worker.js", import.meta.url), {
  onProgress: showProgress,
  onFatal: (message, crashed) => diedHandler(message, crashed),
  onEngineState: (msg) => {
    if (msg.vocab) local.setVocab(msg.vocab, msg.module);
    // A logits array the page's Previewer is done with goes back to be refilled.
    if (msg.pending) {
      const spent = local.setState(msg.pending);
      if (spent) client.recycle(spent);
    }
  },
});
