// The generation gallery: every strategy from the prompt a, as the lesson's
// table, each text coloured by token.

import { makeEl } from "../render/dom.js";

export function gallery(box, d) {
  const table = makeEl("table", { class: "lesson-gallery" });
  for (const r of d.rows) {
    const tr = makeEl("tr");
    const text = makeEl("td", { class: "mono" });
    for (const ch of r.text) text.append(makeEl("span", { class: `abc-${ch}` }, ch));
    tr.append(makeEl("th", {}, r.name), text);
    table.append(tr);
  }
  box.append(table);
}
