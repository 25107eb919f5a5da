// The "score a text" panel's controls: the text box (prefilled with a text
// that suits the model until the user types), the Score button, whether a
// chat model reads the text inside its chat template (off by default: plain
// text, as GLTR), and picking a token to read its details.

import { state, view, currentModel, currentPrompt, selectScoreToken, subscribe } from "../state/store.js";
import { doScore } from "../engine/generation.js";
import { scheduleRender } from "../panels/frame.js";
import { $, setText } from "../render/dom.js";

/** The user has typed in the box: model changes no longer replace the text. */
let edited = false;

/** Whether the text is scored inside the chat template (a switch of its own, shown for a chat model). */
function scoreInChat() {
  return !!view.info?.chat && /** @type {HTMLInputElement} */ ($("#score-chat")).checked;
}

/** After a model change: offer a text that suits it (unless the user wrote one). */
function offerScoreText() {
  $("#score-chat-switch").hidden = !view.info?.chat;
  const box = /** @type {HTMLTextAreaElement} */ ($("#score-text"));
  if (edited || document.activeElement === box) return;
  box.value = currentModel()?.scoreText ?? currentPrompt();
}

export function wireScore() {
  subscribe("model", offerScoreText);
  const box = /** @type {HTMLTextAreaElement} */ ($("#score-text"));
  box.addEventListener("input", () => { edited = true; });
  $("#btn-score").addEventListener("click", () => {
    if (!box.value.trim()) { setText($("#score-msg"), "Type or paste a text first."); return; }
    setText($("#score-msg"), "");
    doScore(box.value, scoreInChat());
  });
  $("#btn-score-output").addEventListener("click", () => {
    if (!view.report) return;
    const t = view.transcript;
    // In chat mode the reply alone (the prompt is inside the template); the
    // template's special tokens are never part of the text.
    const tokens = state.settings.chat ? t.generated : [...t.promptTokens, ...t.generated];
    box.value = tokens.filter((t) => !t.special).map((t) => t.text).join("");
    edited = true;
    doScore(box.value, scoreInChat());
  });
  // A token's details: on hover, focus or click (touch screens have no hover).
  const body = $("#p-score .body");
  const pick = (/** @type {Event} */ e) => {
    const el = /** @type {HTMLElement} */ (e.target).closest?.(".score-text .stok");
    if (!el) return;
    const i = Number(el.getAttribute("data-i"));
    if (view.scoreSelected === i) return;
    selectScoreToken(i);
    scheduleRender();
  };
  body.addEventListener("focusin", pick);
  body.addEventListener("click", pick);
  body.addEventListener("mouseover", pick);
}
