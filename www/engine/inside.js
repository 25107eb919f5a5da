// The inside panel's link to the engine: the worker is told when the panel
// opens or closes (closed, the engine computes no attention weights and no
// logit lens), and an opened panel gets the inside of the distribution shown
// at once instead of at the next step.

import { client, sayEngineError } from "./link.js";
import * as store from "../state/store.js";
import { state, view } from "../state/store.js";
import { say, unsay } from "../panels/messages.js";
import { scheduleRender } from "../panels/frame.js";

/** @returns {boolean} the inside panel is shown */
export function insideWanted() {
  return state.panels.includes("inside");
}

/**
 * Tell the worker whether the panel is open; when it is, the engine's inside
 * of the pending position (`inside_now`) goes into the store. Called when the
 * panel switch moves and when the panels come to show the next token's
 * distribution (a preview after a step), whose inside no report carried.
 */
export async function syncInside() {
  const on = insideWanted();
  if (!on) store.takeInside(null);
  if (!view.ready) return; // the load's own request tells the worker (model-load.js)
  try {
    const msg = await client.request("inside", { on });
    if (!msg.supported && on) say("This engine build has no inside report: rebuild www/pkg (pkg-scripts/build).", "error", "inside");
    else unsay("inside");
    // Only while the panel is still open: a close in between wins.
    if (insideWanted()) store.takeInside(msg.inside);
    scheduleRender();
  } catch (err) { sayEngineError(err); }
}
