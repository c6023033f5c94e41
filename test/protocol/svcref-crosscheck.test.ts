import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const svcrefDir = process.env.SVC_REF_DIR ?? fileURLToPath(new URL('../../../shared/tools/', import.meta.url));
const python = spawnSync('python3', ['--version']).status === 0;
const skip = !python ? 'python3 not found: the independent cross-check needs it' : !existsSync(`${svcrefDir}/svcref.py`) ? `svcref.py not found in ${svcrefDir}` : false;

describe('independent reference (../shared/tools/svcref.py)', () => {
  it('re-checks every golden vector file', { skip }, () => {
    const r = spawnSync('python3', [fileURLToPath(new URL('../support/svcref_check.py', import.meta.url)), svcrefDir, fileURLToPath(new URL('../vectors/', import.meta.url))], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(out.failures, []);
    assert.ok(out.checked > 900, `checked ${out.checked}`);
  });
});
