// "Open a GGUF file…": a file from the user's disk, by the file picker or
// dropped on the page, becomes the model. It never leaves the browser: its
// bytes are checked here (the 4-byte magic "GGUF", the size) and handed to
// the engine's worker as a transferred ArrayBuffer.

import { $ } from "../render/dom.js";
import { loadFile } from "../engine/model-load.js";
import { say, unsay } from "../panels/messages.js";

/**
 * The largest file the page tries. The engine dequantises the weights to f32
 * at load, in a wasm memory of at most 4 GiB: a Q4 file of 1 GiB would need
 * about 6 GiB.
 */
export const MAX_GGUF_BYTES = 1024 ** 3;
/** A GGUF header alone (magic, version, tensor and key counts) is 24 bytes. */
const MIN_GGUF_BYTES = 24;

/**
 * Check a file and, when it may be a GGUF, load it.
 * @param {File} file
 */
export async function openGguf(file) {
  unsay("open-file");
  const problem = await checkFile(file);
  if (problem) { say(problem, "error", "open-file"); return; }
  // The worker reads the file piece by piece into the engine's memory: the
  // page never holds its bytes.
  await loadFile(file, file.name);
}

/**
 * What is wrong with a file before the engine sees it, or null.
 * @param {File} file
 * @returns {Promise<string|null>}
 */
export async function checkFile(file) {
  if (file.size < MIN_GGUF_BYTES) return `${file.name} is ${file.size} bytes: too short to be a GGUF file.`;
  if (file.size > MAX_GGUF_BYTES) {
    return `${file.name} is ${(file.size / 1e9).toFixed(2)} GB: the page opens GGUF files up to ${MAX_GGUF_BYTES / 1024 ** 3} GiB ` +
      "(the weights are unpacked to 32-bit floats in the browser's memory). Use the nexttoken CLI for larger models.";
  }
  const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  if (String.fromCharCode(...head) !== "GGUF") {
    const hex = [...head].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    return `${file.name} is not a GGUF file: it starts with the bytes ${hex}, a GGUF file with "GGUF" (47 47 55 46).`;
  }
  return null;
}

/** The button, the hidden file input, and dropping a file anywhere on the page. */
export function wireGgufOpen() {
  const input = /** @type {HTMLInputElement} */ ($("#gguf-file"));
  $("#btn-open-gguf").addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    const file = input.files?.[0];
    input.value = ""; // the same file can be opened again
    if (file) openGguf(file);
  });

  const overlay = $("#drop-overlay");
  const hasFiles = (/** @type {DragEvent} */ e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
  let depth = 0; // dragenter/dragleave fire for every element crossed
  document.addEventListener("dragenter", (e) => {
    if (!hasFiles(e)) return;
    depth++;
    overlay.hidden = false;
  });
  document.addEventListener("dragleave", (e) => {
    if (!hasFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) overlay.hidden = true;
  });
  document.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault(); // allow the drop
    if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
  });
  document.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault(); // the browser would open the file instead
    depth = 0;
    overlay.hidden = true;
    const file = e.dataTransfer?.files?.[0];
    if (file) openGguf(file);
  });
}
