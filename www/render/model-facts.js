//# allFunctionsCalledOnLoad
// The one-line facts about the loaded model under the model picker, from the
// engine's ModelInfo.

import { setText } from "./dom.js";

/**
 * @param {any} info ModelInfo
 * @returns {string} "<name> · <vocab> tokens · ..."
 */
export function describeModel(info) {
  const parts = [`${info.name}`, `${info.vocab_size} tokens`];
  if (info.kind === "transformer") {
    parts.push(`${info.layers} layers`, `${info.heads} heads (${info.kv_heads} KV)`, `d = ${info.d_model}`,
      `context ${info.context}`);
  }
  if (info.params) parts.push(`${info.params.toLocaleString("en-US")} parameters`);
  if (info.quant) parts.push(info.quant);
  if (info.file_bytes) parts.push(`file ${(info.file_bytes / 1e6).toFixed(1)} MB`);
  if (info.chat) parts.push(`chat template ${info.chat}`);
  if (info.backend && info.backend !== "none") parts.push(`backend ${info.backend}`);
  return parts.join(" · ");
}

/**
 * @param {HTMLElement} el
 * @param {any|null} info
 */
export function renderModelFacts(el, info) {
  setText(el, info ? describeModel(info) : "");
}
