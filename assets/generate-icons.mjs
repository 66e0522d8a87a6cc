#!/usr/bin/env node
// Draws Gatehouse's icons (tray states at 1x/2x, app icons, the console's
// favicon) from one gate glyph and writes them as PNGs. Deterministic: run
// `node assets/generate-icons.mjs` after changing a shape and commit the output.
// No image library: a few shape tests, 4x4 supersampling, and a tiny PNG encoder.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const rendererPublic = join(here, '..', 'renderer', 'public');

// ---- PNG ------------------------------------------------------------------
const CRC_TABLE = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
/** RGBA pixels (Uint8Array, size*size*4) -> PNG file bytes. */
export function encodePng(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    rows[y * (size * 4 + 1)] = 0; // filter: none
    Buffer.from(rgba.buffer, rgba.byteOffset + y * size * 4, size * 4).copy(rows, y * (size * 4 + 1) + 1);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- shapes on a 32x32 design grid (the same drawing as renderer/components/logo.tsx) ----
// Each shape carries the box outside which it is never true (design units): a layer whose box no sample of a pixel
// falls in is skipped. That changes no pixel, only the time: the 1024 px icon tested every sample against all 17
// layers (14 s; its gradient bands each cover a sixteenth of it).
const EPS = 1e-6;
const boxed = (test, box) => Object.assign(test, { box });
const roundRect = (x, y, w, h, r) =>
  boxed(
    (px, py) => {
      if (px < x || py < y || px > x + w || py > y + h) return false;
      const cx = Math.min(Math.max(px, x + r), x + w - r);
      const cy = Math.min(Math.max(py, y + r), y + h - r);
      return (px - cx) ** 2 + (py - cy) ** 2 <= r * r;
    },
    [x, y, x + w, y + h],
  );
const circle = (cx, cy, r) =>
  boxed((px, py) => (px - cx) ** 2 + (py - cy) ** 2 <= r * r, [cx - r, cy - r, cx + r, cy + r]);
const union = (...shapes) =>
  boxed(
    (px, py) => shapes.some((s) => s(px, py)),
    [0, 1, 2, 3].map((k) => (k < 2 ? Math.min : Math.max)(...shapes.map((s) => s.box[k]))),
  );
const minus = (a, b) => boxed((px, py) => a(px, py) && !b(px, py), a.box);
/** False when no point of [x0, x1] x [y0, y1] can be in the shape. */
const mayHit = (shape, x0, y0, x1, y1) =>
  !(x1 < shape.box[0] - EPS || y1 < shape.box[1] - EPS || x0 > shape.box[2] + EPS || y0 > shape.box[3] + EPS);

const GATE = union(
  roundRect(6, 8, 4, 18, 1),
  roundRect(22, 8, 4, 18, 1),
  roundRect(5, 6, 22, 3.5, 1.5),
  roundRect(12.5, 11, 2, 15, 1),
  roundRect(17.5, 11, 2, 15, 1),
);
const DOT = circle(26, 7, 5);
const DOT_GAP = circle(26, 7, 7.5);

/** Rasterize layers [{shape, color:[r,g,b], alpha}] onto a transparent size x size canvas; `scale` maps design units to the canvas. */
function render(size, layers, { scale = size / 32, offset = 0 } = {}) {
  const out = new Uint8Array(size * size * 4);
  const S = 4;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let r = 0,
        g = 0,
        b = 0,
        a = 0; // premultiplied, "over" compositing
      // the first and last samples' coordinates, computed as the loop below computes them
      const x0 = (x + 0.5 / S - offset) / scale;
      const x1 = (x + (S - 0.5) / S - offset) / scale;
      const y0 = (y + 0.5 / S - offset) / scale;
      const y1 = (y + (S - 0.5) / S - offset) / scale;
      for (const layer of layers) {
        // no sample of this pixel in the layer's box: no coverage, as the samples would find
        if (!mayHit(layer.shape, x0, y0, x1, y1)) continue;
        let hits = 0;
        for (let sy = 0; sy < S; sy++) {
          for (let sx = 0; sx < S; sx++) {
            const px = (x + (sx + 0.5) / S - offset) / scale;
            const py = (y + (sy + 0.5) / S - offset) / scale;
            if (layer.shape(px, py)) hits++;
          }
        }
        const cov = (hits / (S * S)) * (layer.alpha ?? 1);
        if (!cov) continue;
        if (layer.erase) {
          r *= 1 - cov;
          g *= 1 - cov;
          b *= 1 - cov;
          a *= 1 - cov;
          continue;
        }
        r = layer.color[0] * cov + r * (1 - cov);
        g = layer.color[1] * cov + g * (1 - cov);
        b = layer.color[2] * cov + b * (1 - cov);
        a = cov + a * (1 - cov);
      }
      const i = (y * size + x) * 4;
      out[i] = a ? Math.round(r / a) : 0;
      out[i + 1] = a ? Math.round(g / a) : 0;
      out[i + 2] = a ? Math.round(b / a) : 0;
      out[i + 3] = Math.round(a * 255);
    }
  }
  return out;
}

// ---- the icons -------------------------------------------------------------
const BLACK = [0, 0, 0];
const BLUE = [59, 115, 217];
const GREY = [138, 148, 163];
const ORANGE = [226, 112, 31];
const WHITE = [255, 255, 255];

/** Tray states. Template (macOS): black + alpha, the menu bar recolours it. Coloured: for Windows and Linux panels. */
const TRAY = {
  off: { template: [{ shape: GATE, color: BLACK, alpha: 0.4 }], colour: [{ shape: GATE, color: GREY }] },
  on: { template: [{ shape: GATE, color: BLACK }], colour: [{ shape: GATE, color: BLUE }] },
  attention: {
    template: [
      { shape: minus(GATE, DOT_GAP), color: BLACK },
      { shape: DOT, color: BLACK },
    ],
    colour: [
      { shape: minus(GATE, DOT_GAP), color: BLUE },
      { shape: DOT, color: ORANGE },
    ],
  },
};

/** App icon: a rounded square in the console's accent blue with the gate in white. */
function appIcon(size) {
  const bg = roundRect(1, 1, 30, 30, 7);
  const top = [47, 107, 224];
  const bottom = [29, 63, 153];
  const rows = [];
  // a vertical gradient, as 16 bands (invisible at icon sizes, cheap to draw)
  for (let i = 0; i < 16; i++) {
    const t = i / 15;
    const color = top.map((c, k) => Math.round(c + (bottom[k] - c) * t));
    const from = 1 + i * (30 / 16);
    const to = 1 + (i + 1) * (30 / 16) + 0.01;
    rows.push({
      shape: boxed((px, py) => bg(px, py) && py >= from && py < to, [bg.box[0], from, bg.box[2], to]),
      color,
    });
  }
  return render(size, [...rows, { shape: GATE, color: WHITE }]);
}

export function buildAll() {
  const files = {};
  for (const [state, looks] of Object.entries(TRAY)) {
    for (const [suffix, size] of [
      ['', 16],
      ['@2x', 32],
    ]) {
      files[`tray-${state}Template${suffix}.png`] = encodePng(size, render(size, looks.template));
      files[`tray-${state}${suffix}.png`] = encodePng(size, render(size, looks.colour));
    }
  }
  for (const size of [1024, 512, 256]) files[`icon-${size}.png`] = encodePng(size, appIcon(size));
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = buildAll();
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(here, name), bytes);
  mkdirSync(rendererPublic, { recursive: true });
  writeFileSync(join(rendererPublic, 'favicon.png'), encodePng(32, appIcon(32)));
  console.log(`wrote ${Object.keys(files).length} icons to assets/ and renderer/public/favicon.png`);
}
