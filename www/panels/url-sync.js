//# allFunctionsCalledOnLoad
// The view state mirrored in the URL, so a link (or an iframe in a lesson)
// reproduces what is on screen.

import { state } from "../state/store.js";
import { formatLink } from "../state/url.js";
import { say, unsay } from "./messages.js";

let queued = false;
let lastWrite = -Infinity;
/** Told after each write (the embed snippet follows the URL). @type {(() => void)[]} */
const afterWrite = [];

/**
 * history.replaceState costs milliseconds in Chromium (a CPU profile of slider
 * moves showed it inside the frame that should paint the move), so the URL is
 * written after the frame's paint and at most this often while a slider is
 * dragged; the last state is always written.
 */
const URL_INTERVAL_MS = 100;

/**
 * The query string of the current view. A model opened from the user's disk
 * cannot be linked to: the link names no model then (the receiver gets the default).
 * A view too long for a link (a pasted essay as the prompt) is linked
 * without its longest free text, and the page says so (state/url.js formatLink).
 * @param {object} [overrides] fields of the view state to replace (e.g. { embed: true })
 * @returns {string}
 */
export function linkQuery(overrides = {}) {
  const { query, omitted } = formatLink({ ...state, ...(state.file ? { model: null } : {}), ...overrides });
  tellOmitted(omitted);
  return query;
}

/**
 * Say (once, replaced as it changes) what links leave out, or nothing.
 * @param {string[]} omitted
 */
function tellOmitted(omitted) {
  if (!omitted.length) { unsay("link-too-long"); return; }
  const parts = omitted.map((what) => (what === "prompt" ? `the prompt (${(state.prompt ?? "").length.toLocaleString("en")} characters)` : `the ${what}`));
  const also = omitted.includes("prompt") ? "; whoever opens them gets the model's default prompt" : "";
  say(`Too long to share as a link (links stay under 8 KB): this page's address and its embed code leave out ${parts.join(", ")}${also}.`,
    "info", "link-too-long");
}

/** Mirror the state in the URL. <body data-url-pending> is set until it is written (tests wait for it). */
export function updateUrl() {
  if (queued) return;
  queued = true;
  document.body.dataset.urlPending = "true";
  requestAnimationFrame(() => {
    const wait = Math.max(0, lastWrite + URL_INTERVAL_MS - performance.now());
    setTimeout(() => {
      queued = false;
      lastWrite = performance.now();
      history.replaceState(null, "", `${location.pathname}${linkQuery()}${location.hash}`);
      delete document.body.dataset.urlPending;
      for (const fn of afterWrite) fn();
    }, wait);
  });
}

/** @param {() => void} fn called after every URL write */
export function onUrlWritten(fn) {
  afterWrite.push(fn);
}
