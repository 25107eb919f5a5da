//# allFunctionsCalledOnLoad
// Small DOM helpers shared by the panel renderers. They exist so that a
// repaint reuses the nodes it made last time (no layout thrash, no innerHTML).

export const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * The page's element for a selector (one that is in index.html).
 * @param {string} sel
 */
export const $ = (sel) => /** @type {HTMLElement} */ (document.querySelector(sel));

/**
 * Make an element with attributes and optional text.
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @param {string} [text]
 * @returns {HTMLElement}
 */
export function makeEl(tag, attrs = {}, text) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * Make an SVG element with attributes.
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @returns {SVGElement}
 */
export function makeSvg(tag, attrs = {}) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * Set text only when it changed (writing equal text still dirties layout).
 * An element holding one text node keeps that node and changes its data:
 * `textContent` would put a new node (and its layout object) in the old
 * one's place at every repaint: garbage until the next collection, 14.9 MiB
 * of it in Blink's heap in Gemma 3's tab after 24 steps (1.0 MiB with the
 * node kept; Chrome's memory dumps before and after a forced collection).
 * @param {Node} el
 * @param {string} text
 */
export function setText(el, text) {
  const only = el.firstChild;
  if (only !== null && only === el.lastChild && only.nodeType === Node.TEXT_NODE) {
    const node = /** @type {Text} */ (only);
    if (node.data !== text) node.data = text;
    return;
  }
  if (el.textContent !== text) el.textContent = text;
}

/**
 * Set an attribute only when it changed.
 * @param {Element} el
 * @param {string} name
 * @param {string|number} value
 */
export function setAttr(el, name, value) {
  const v = String(value);
  if (el.getAttribute(name) !== v) el.setAttribute(name, v);
}

/**
 * Make `parent` hold exactly `n` children, creating missing ones with `create`
 * and removing extras; existing children are kept so repaints only patch.
 * @template {Element} T
 * @param {Element} parent
 * @param {number} n
 * @param {(i: number) => T} create
 * @returns {T[]}
 */
export function syncChildren(parent, n, create) {
  while (parent.children.length > n) parent.lastElementChild.remove();
  while (parent.children.length < n) parent.appendChild(create(parent.children.length));
  return /** @type {T[]} */ (Array.from(parent.children));
}

/**
 * Find the panel's named slot (a child with data-slot), creating it once.
 * @param {Element} root
 * @param {string} slot
 * @param {() => Element} create
 * @returns {Element}
 */
export function ensureSlot(root, slot, create) {
  let el = root.querySelector(`[data-slot="${slot}"]`);
  if (!el) {
    el = create();
    el.setAttribute("data-slot", slot);
    root.appendChild(el);
  }
  return el;
}
