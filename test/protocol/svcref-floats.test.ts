/**
 * The canonical float encoding (shortest of half, single, double that holds the value exactly;
 * integral values as integers) cross-checked with the independent Python reference on thousands
 * of values: halves (normal and subnormal), singles, doubles, edges and their negatives.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { encodeCanonical } from '../../src/protocol/cbor.js';
import { toHex } from '../../src/protocol/bytes.js';

const svcrefDir = process.env.SVC_REF_DIR ?? fileURLToPath(new URL('../../../shared/tools/', import.meta.url));
const python = spawnSync('python3', ['--version']).status === 0;
const skip = !python ? 'python3 not found: the independent cross-check needs it' : !existsSync(`${svcrefDir}/svcref.py`) ? `svcref.py not found in ${svcrefDir}` : false;

/** Deterministic values covering every width and the boundaries between them. */
function values(): number[] {
  let x = 0x9e3779b9;
  const rnd = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const out: number[] = [
    0.5,
    1.5,
    65504,
    65520,
    5.960464477539063e-8,
    6.103515625e-5,
    6.097555160522461e-5,
    3.4028234663852886e38,
    1e300,
    1.1,
    2 ** -149,
    2 ** -150,
    2 ** -24,
    2 ** -25,
    0.1,
    1 / 3,
    2 ** 53 + 0.5,
  ];
  const view = new DataView(new ArrayBuffer(8));
  for (let i = 0; i < 1500; i++) {
    view.setUint16(0, Math.floor(rnd() * 0x7c00)); // a finite half pattern
    const h = view.getUint16(0);
    const exp = (h >> 10) & 0x1f;
    const mant = h & 0x3ff;
    out.push(exp === 0 ? mant * 2 ** -24 : (1 + mant / 1024) * 2 ** (exp - 15));
    view.setUint32(0, Math.floor(rnd() * 0x7f800000)); // a finite single pattern
    out.push(view.getFloat32(0));
    out.push((rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20)); // a double
    out.push(Math.fround((Math.floor(rnd() * 255) - 127) * 0.0123)); // a dequantized embedding value
  }
  return [...out, ...out.map((v) => -v)].filter((v) => Number.isFinite(v));
}

describe('canonical floats against the independent reference', () => {
  it('encodes every value exactly as svcref.py does', { skip }, () => {
    const vs = values();
    const ours = vs.map((v) => toHex(encodeCanonical(v)));
    const script = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(svcrefDir)})`,
      'import svcref as R',
      'vs = json.loads(sys.stdin.read())',
      'print(json.dumps([R.cbor(float(v)).hex() for v in vs]))',
    ].join('\n');
    // repr() round-trips doubles exactly, and JSON carries the shortest round-tripping text.
    const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(vs), encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(r.status, 0, r.stderr);
    const theirs: string[] = JSON.parse(r.stdout);
    const differ = vs.map((v, i) => [v, ours[i], theirs[i]] as const).filter(([, a, b]) => a !== b);
    assert.deepEqual(differ.slice(0, 10), [], `${differ.length} of ${vs.length} values differ`);
    assert.ok(vs.length > 6000);
    assert.ok(ours.some((h) => h.startsWith('f9')) && ours.some((h) => h.startsWith('fa')) && ours.some((h) => h.startsWith('fb')), 'every width is exercised');
  });
});
