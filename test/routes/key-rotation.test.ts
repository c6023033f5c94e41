/**
 * Live rotation of the responder key (docs/security.md, "Rotating the responder key"): a running
 * responder picks up `svc rotate-key` within seconds, signs receipts and tree heads with the new
 * epoch, keeps the retired key published, and answers signed before still verify.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../../src/protocol/index.js';
import { rotateResponderKey } from '../../src/keys.js';
import { verifyTreeHead } from '../../src/protocol/verify-log.js';
import { build, type TestApp } from '../support/app.js';
import { makeAttester } from '../support/attester.js';
import { attest } from './v1/reads/helpers.js';

let t: TestApp;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-rotation-'));
const op = makeAttester('rotation-operator');
const CELL = P.cellOf(45.75, 4.85);

before(async () => {
  t = await build({ dataDir, attesterKeys: [op.publicKey] }, {}, { materializers: [] });
});
after(async () => t.close());

const get = async (url: string) => (await t.app.inject({ method: 'GET', url })).json();
const post = async (url: string, payload: object) => (await t.app.inject({ method: 'POST', url, payload })).json();

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  // The watcher looks every 2 s; a busy machine may take several rounds.
  for (let i = 0; i < 300; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('rotating the responder key on a running responder', () => {
  it('signs with the new epoch within seconds; the retired key stays published and old answers verify', async () => {
    await attest(t, op, [{ kind: 'primary', cell: CELL, band: 'copdem30m.elevation_mean', tslot: 0, value: 170, unit: 'm_msl' }]);
    const before = await get('/.well-known/svc.json');
    const oldRead = await post('/v1/recall', { cell: CELL, bands: ['copdem30m.elevation_mean'] });
    assert.equal(oldRead.receipt.responder, before.responder_pubkey_b32);

    const rotated = rotateResponderKey(dataDir);
    assert.equal(rotated.retired, before.responder_pubkey_b32);
    const now = await until('the new key at /.well-known', async () => {
      const w = await get('/.well-known/svc.json');
      return w.responder_pubkey_b32 === rotated.public_key ? w : undefined;
    });
    assert.equal(now.responder_key_epoch, before.responder_key_epoch + 1);
    assert.deepEqual(
      now.retired_keys.map((k: { public_key: string; epoch: number }) => [k.public_key, k.epoch]),
      [[before.responder_pubkey_b32, before.responder_key_epoch]],
    );

    const newRead = await post('/v1/recall', { cell: CELL, bands: ['copdem30m.elevation_mean'] });
    assert.equal(newRead.receipt.responder, rotated.public_key);
    assert.equal(newRead.receipt.responder_key_epoch, rotated.epoch);
    assert.ok(P.verifyReceipt(newRead.receipt, { publicKey: rotated.public_key }).valid);
    // Signed before: valid offline against the retired key, and trusted with it listed.
    const old = P.verifyResponse(oldRead, { publicKey: rotated.public_key, trustedKeys: [before.responder_pubkey_b32] });
    assert.equal(old.valid && old.trusted, true, JSON.stringify(old.receipts.map((r) => r.failures)));
    const checked = await post('/v1/verify_receipt', { receipt: oldRead.receipt });
    assert.equal(checked.valid, true, JSON.stringify(checked));
    // The command line: pinned to the new key, the old answer is refused unless its key is named as retired.
    const file = join(dataDir, 'old-read.json');
    writeFileSync(file, JSON.stringify(oldRead));
    const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'verify', file, ...args], { encoding: 'utf8' }).status;
    assert.equal(cli('--pubkey', rotated.public_key), 1);
    assert.equal(cli('--pubkey', rotated.public_key, '--retired', before.responder_pubkey_b32), 0);

    // Tree heads too: a write after the rotation is under a head signed with the new key.
    await attest(t, op, [{ kind: 'primary', cell: P.cellOf(45.76, 4.86), band: 'copdem30m.elevation_mean', tslot: 0, value: 171, unit: 'm_msl' }]);
    const sth = await get('/v1/log/sth');
    assert.equal(sth.responder, rotated.public_key);
    const head = verifyTreeHead(sth, { publicKey: rotated.public_key });
    assert.ok(head.ok, JSON.stringify({ head, sth }));
  });

  it('a damaged key file is ignored: the responder keeps signing with the key it has', async () => {
    const w0 = await get('/.well-known/svc.json');
    writeFileSync(join(dataDir, 'keys', 'responder.json'), '{"schema":"svc.keys.v1","current":{');
    await new Promise((r) => setTimeout(r, 4500));
    const w1 = await get('/.well-known/svc.json');
    assert.equal(w1.responder_pubkey_b32, w0.responder_pubkey_b32);
    const read = await post('/v1/recall', { cell: CELL, bands: ['copdem30m.elevation_mean'] });
    assert.ok(P.verifyReceipt(read.receipt, { publicKey: w0.responder_pubkey_b32 }).valid);
  });
});
