/**
 * A 5 × 7 bitmap font for the labels of raster pictures (PNG has no text of its own): digits,
 * capital letters and the punctuation numbers and units need. Lower-case letters are drawn as
 * capitals; a character without a glyph is drawn as '?'. Each glyph is seven rows of five bits,
 * written as 14 hex digits (two per row, the high bit of each row's five the leftmost pixel).
 */

const GLYPHS: Readonly<Record<string, string>> = {
  ' ': '00000000000000',
  '0': '0e11131519110e',
  '1': '040c040404040e',
  '2': '0e11010204081f',
  '3': '1f02040201110e',
  '4': '02060a121f0202',
  '5': '1f101e0101110e',
  '6': '0608101e11110e',
  '7': '1f010204080808',
  '8': '0e11110e11110e',
  '9': '0e11110f01020c',
  A: '0e1111111f1111',
  B: '1e11111e11111e',
  C: '0e11101010110e',
  D: '1c12111111121c',
  E: '1f10101e10101f',
  F: '1f10101e101010',
  G: '0e11101711110f',
  H: '1111111f111111',
  I: '0e04040404040e',
  J: '0702020202120c',
  K: '11121418141211',
  L: '1010101010101f',
  M: '111b1515111111',
  N: '11111915131111',
  O: '0e11111111110e',
  P: '1e11111e101010',
  Q: '0e11111115120d',
  R: '1e11111e141211',
  S: '0f10100e01011e',
  T: '1f040404040404',
  U: '1111111111110e',
  V: '11111111110a04',
  W: '1111111515150a',
  X: '11110a040a1111',
  Y: '1111110a040404',
  Z: '1f01020408101f',
  '.': '00000000000c0c',
  ',': '000000000c0408',
  '-': '0000001f000000',
  '–': '0000001f000000',
  '−': '0000001f000000',
  '+': '0004041f040400',
  ':': '000c0c000c0c00',
  ';': '000c0c000c0408',
  '/': '00010204081000',
  '%': '18190204081303',
  '(': '02040808080402',
  ')': '08040202020408',
  '[': '0e08080808080e',
  ']': '0e02020202020e',
  '=': '00001f001f0000',
  '<': '02040810080402',
  '>': '08040201020408',
  '?': '0e110102040004',
  '!': '04040404040004',
  _: '0000000000001f',
  "'": '04040800000000',
  '*': '0004150e150400',
  '°': '0c12120c000000',
  µ: '00111111131d10',
  '²': '0c0204080e0000',
  '×': '00110a040a1100',
  '≥': '08040204081f00',
  '≤': '02040804021f00',
};

const decoded = new Map<string, Uint8Array>();

/** The seven 5-bit rows of `ch`'s glyph (its capital's, or '?'). */
export function glyph(ch: string): Uint8Array {
  const key = GLYPHS[ch] !== undefined ? ch : GLYPHS[ch.toUpperCase()] !== undefined ? ch.toUpperCase() : '?';
  let rows = decoded.get(key);
  if (!rows) {
    const hex = GLYPHS[key]!;
    rows = Uint8Array.from({ length: 7 }, (_, i) => Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16));
    decoded.set(key, rows);
  }
  return rows;
}

/** Glyph width and height in font pixels, and the advance from one character to the next. */
export const GLYPH_W = 5;
export const GLYPH_H = 7;
export const ADVANCE = 6;

/** Width in picture pixels of `text` drawn at `scale`. */
export function textWidth(text: string, scale: number): number {
  const n = [...text].length;
  return n === 0 ? 0 : (n * ADVANCE - 1) * scale;
}

/**
 * Draw `text` into an RGBA buffer `width` pixels wide, its top-left corner at (x, y), each font
 * pixel a `scale` × `scale` block of `rgba`; pixels outside the buffer are skipped.
 */
export function drawText(buf: Uint8Array, width: number, x: number, y: number, text: string, scale: number, rgba: readonly [number, number, number, number]): void {
  const height = buf.length / 4 / width;
  let cx = x;
  for (const ch of text) {
    const rows = glyph(ch);
    for (let r = 0; r < GLYPH_H; r++) {
      for (let c = 0; c < GLYPH_W; c++) {
        if (((rows[r]! >> (GLYPH_W - 1 - c)) & 1) === 0) continue;
        for (let dy = 0; dy < scale; dy++) {
          const py = y + r * scale + dy;
          if (py < 0 || py >= height) continue;
          for (let dx = 0; dx < scale; dx++) {
            const px = cx + c * scale + dx;
            if (px < 0 || px >= width) continue;
            buf.set(rgba, (py * width + px) * 4);
          }
        }
      }
    }
    cx += ADVANCE * scale;
  }
}
