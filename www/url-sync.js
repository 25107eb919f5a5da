// The view state mirrored in the URL, so a link (or an iframe in a lesson)
// reproduces what is on screen.

import { state } from "./app-state.js";
import { formatQuery } from "./state/url.js";

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
 * @param {object} [overrides] fields of the view state to replace (e.g. { embed: true })
 * @returns {string}
 */
export function linkQuery(overrides = {}) {
  return formatQuery({ ...state, ...(state.file ? { model: null } : {}), ...overrides });
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
