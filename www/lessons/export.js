// The temperature sweep as an animated PNG, made here: every frame's chart is
// drawn to a canvas and encoded as PNG by the browser, and the frames' image
// data are stitched into one APNG (acTL, then fcTL + IDAT for the first frame
// and fcTL + fdAT for the others), 8 frames per second like the lesson's GIF.

import { barChart } from "./svg.js";
import { sweepTitle } from "./sweep.js";

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of the bytes (PNG's, over a chunk's type and data). */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * The chunks of a PNG file.
 * @param {Uint8Array} png
 * @returns {{ type: string, data: Uint8Array }[]}
 */
export function readChunks(png) {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const out = [];
  for (let at = 8; at + 12 <= png.length;) {
    const len = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    out.push({ type, data: png.subarray(at + 8, at + 8 + len) });
    at += 12 + len;
  }
  return out;
}

function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function u32s(...values) {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setUint32(i * 4, v));
  return out;
}

/**
 * Stitch same-sized PNG frames into an APNG.
 * @param {Uint8Array[]} frames PNG files
 * @param {number} fps
 * @returns {Uint8Array}
 */
export function assembleApng(frames, fps) {
  const first = readChunks(frames[0]);
  const ihdr = first.find((c) => c.type === "IHDR").data;
  const width = new DataView(ihdr.buffer, ihdr.byteOffset).getUint32(0), height = new DataView(ihdr.buffer, ihdr.byteOffset).getUint32(4);
  const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("acTL", u32s(frames.length, 0))];
  let seq = 0;
  frames.forEach((png, k) => {
    const fctl = new Uint8Array(26);
    fctl.set(u32s(seq++, width, height, 0, 0), 0);
    const v = new DataView(fctl.buffer);
    v.setUint16(20, 1); // delay 1/fps s
    v.setUint16(22, fps);
    fctl[24] = 0; // dispose: none
    fctl[25] = 0; // blend: source
    parts.push(chunk("fcTL", fctl));
    for (const c of readChunks(png).filter((c) => c.type === "IDAT")) {
      if (k === 0) parts.push(chunk("IDAT", c.data));
      else {
        const data = new Uint8Array(4 + c.data.length);
        data.set(u32s(seq++), 0);
        data.set(c.data, 4);
        parts.push(chunk("fdAT", data));
      }
    }
  });
  parts.push(chunk("IEND", new Uint8Array(0)));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/** One SVG drawn onto a canvas and encoded as PNG by the browser. */
async function svgToPng(svg, width, height) {
  const text = new XMLSerializer().serializeToString(svg);
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.drawImage(img, 0, 0, width, height);
  const blob = await new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the browser could not encode a frame"))), "image/png"));
  return new Uint8Array(await blob.arrayBuffer());
}

/**
 * The sweep's frames as one APNG.
 * @param {any} d course_lesson("temperature-sweep")
 * @returns {Promise<Uint8Array>}
 */
export async function makeSweepApng(d) {
  const width = 460, height = 260;
  const chart = barChart(d.frames[0].probs, { width, height, aria: "temperature sweep" });
  chart.svg.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  chart.svg.setAttribute("color", "#222");
  const pngs = [];
  for (let k = 0; k < d.frames.length; k++) {
    chart.set(d.frames[k].probs, sweepTitle(d, k));
    pngs.push(await svgToPng(chart.svg, width, height));
  }
  return assembleApng(pngs, 8);
}

/** Download the sweep as temperature_sweep.png (animated). */
export async function saveSweepApng(d, name) {
  const bytes = await makeSweepApng(d);
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([bytes], { type: "image/apng" }));
  a.download = `${name}.png`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
