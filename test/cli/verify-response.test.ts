import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyCommand } from '../../src/cli-verify.js';
import { editsOf, fixtureApp, savedResponses } from '../support/tamper.js';
import type { TestApp } from '../support/app.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin/svc.mjs');
const run = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: root });

let t: TestApp;
let key: string;
let base: string;
let dir: string;
let saved: Record<string, unknown>;
before(async () => {
  ({ t, key } = await fixtureApp());
  saved = await savedResponses(t);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  dir = mkdtempSync(join(tmpdir(), 'svc-verify-'));
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Run the command in process (the same function the binary runs), output captured. */
async function verifyInProcess(args: string[]): Promise<{ status: number; out: string }> {
  const lines: string[] = [];
  const log = console.log;
  const err = console.error;
  console.log = (...a: unknown[]) => lines.push(a.join(' '));
  console.error = console.log;
  try {
    return { status: await verifyCommand(args), out: lines.join('\n') };
  } finally {
    console.log = log;
    console.error = err;
  }
}

function save(name: string, doc: unknown): string {
  const f = join(dir, `${name}.json`);
  writeFileSync(f, JSON.stringify(doc));
  return f;
}

describe('svc verify <response.json>', () => {
  it('exits 0 for every untouched saved response and 1 for every single edit', async () => {
    let edits = 0;
    for (const [name, doc] of Object.entries(saved)) {
      const ok = await verifyInProcess([save(name, doc), '--pubkey', key]);
      assert.equal(ok.status, 0, `${name}: ${ok.out}`);
      for (const [i, e] of editsOf(name, doc).entries()) {
        const r = await verifyInProcess([save(`${name}-${i}`, e.doc), '--pubkey', key]);
        assert.equal(r.status, 1, `${e.primitive}: ${e.what} → ${r.status}\n${r.out}`);
        assert.match(r.out, /^INVALID/, e.what);
        edits++;
      }
    }
    assert.ok(edits > 150);
  });

  it('prints one line per fact and names the changed one (the binary, exit codes 0 / 1 / 2)', () => {
    const good = run(['verify', save('recall', saved.recall), '--pubkey', key]);
    assert.equal(good.status, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /^valid: \d+ receipt\(s\), 2 fact\(s\)/);
    assert.match(good.stdout, /ok {2}weather\.temperature_2m @ .* signed by operator/);
    const doc = structuredClone(saved.recall) as { facts: { band: string; value: number }[] };
    doc.facts.find((f) => f.band === 'weather.temperature_2m')!.value = -40;
    const bad = run(['verify', save('recall-bad', doc), '--pubkey', key]);
    assert.equal(bad.status, 1);
    assert.match(bad.stdout, /BAD weather\.temperature_2m[\s\S]*cid_mismatch: \$\.facts\[\d\] \(weather\.temperature_2m at /);
    writeFileSync(join(dir, 'junk.json'), '{"a":');
    assert.equal(run(['verify', join(dir, 'junk.json')]).status, 2);
    assert.equal(run(['verify', save('nothing', { hello: 1 })]).status, 2);
  });

  it('names what an edited answer, hotspot or search result breaks (exit 1)', async () => {
    const ask = structuredClone(saved.ask) as { answer: string };
    ask.answer = ask.answer.replace('8000 metres', '12 metres');
    const a = await verifyInProcess([save('ask-12', ask), '--pubkey', key]);
    assert.equal(a.status, 1, a.out);
    assert.match(a.out, /answer_mismatch: \$\.answer: differs from what its parts render from the signed facts/);
    const hunt = structuredClone(saved.hunt) as { hotspots: { value: number }[] };
    hunt.hotspots[0].value = 9;
    const h = await verifyInProcess([save('hunt-9', hunt), '--pubkey', key]);
    assert.equal(h.status, 1, h.out);
    assert.match(h.out, /hotspot_mismatch: \$\.hotspots\[0\]: value 9 differs from the signed/);
    const search = structuredClone(saved.memory_search) as { results: { note: { text: string } }[] };
    search.results[0].note.text = 'all clear';
    const s = await verifyInProcess([save('search-text', search), '--pubkey', key]);
    assert.equal(s.status, 1, s.out);
    assert.match(s.out, /result_mismatch: \$\.results\[0\]\.note: differs from the signed note \(text\)/);
    const recall = structuredClone(saved.recall) as { facts: unknown[] };
    recall.facts.pop();
    const r = await verifyInProcess([save('recall-cut', recall), '--pubkey', key]);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /bound_not_shown: \$\.receipt binds \w+, which the response shows nowhere/);
  });

  it('--help prints usage and exits 0; an unknown option exits 2', () => {
    const h = run(['verify', '--help']);
    assert.equal(h.status, 0);
    assert.match(h.stdout, /usage: svc verify[\s\S]*--json[\s\S]*--log/);
    assert.equal(run(['verify', 'x.json', '--frobnicate']).status, 2);
  });

  it('--json prints the per-item report', async () => {
    const r = await verifyInProcess([save('many', saved.recall_many), '--json']);
    const report = JSON.parse(r.out);
    assert.equal(report.valid, true);
    assert.equal(report.facts.length, (report.facts as unknown[]).length);
    assert.ok(report.facts.every((f: { ok: boolean; recomputed_cid: string; fact_cid: string }) => f.ok && f.recomputed_cid === f.fact_cid));
    assert.ok(report.receipts.length >= 3);
  });
});

describe('svc verify --log', () => {
  it("proves each fact's log position from the live log, saves the evidence and re-checks it offline", async () => {
    const evidence = join(dir, 'evidence.json');
    const r = await verifyInProcess([save('recall-log', saved.recall), '--pubkey', key, '--log', base, '--save-log', evidence]);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /log: tree head of size \d+ verifies; 2\/2 fact\(s\) placed/);
    const offline = await verifyInProcess([save('recall-log2', saved.recall), '--pubkey', key, '--log', evidence]);
    assert.equal(offline.status, 0, offline.out);

    // A forged position: the fact's metadata names another log entry.
    const doc = structuredClone(saved.recall) as { fact_meta: Record<string, { log_index: number }> };
    const cids = Object.keys(doc.fact_meta);
    assert.notEqual(doc.fact_meta[cids[0]].log_index, doc.fact_meta[cids[1]].log_index);
    doc.fact_meta[cids[0]].log_index = doc.fact_meta[cids[1]].log_index;
    const forged = await verifyInProcess([save('recall-forged', doc), '--pubkey', key, '--log', base]);
    assert.equal(forged.status, 1, forged.out);
    assert.match(forged.out, /log: entry \d+ records another batch/);

    // Evidence whose entry bytes were changed no longer reaches the signed head.
    const ev = JSON.parse(readFileSync(evidence, 'utf8'));
    const k = Object.keys(ev.entries)[0];
    ev.entries[k].cbor_hex = ev.entries[k].cbor_hex.slice(0, -2) + (ev.entries[k].cbor_hex.endsWith('00') ? '01' : '00');
    const broken = await verifyInProcess([save('recall-log3', saved.recall), '--log', save('evidence-bad', ev)]);
    assert.equal(broken.status, 1, broken.out);
    assert.match(broken.out, /is not included in the signed tree head/);

    // A log directory is not evidence: a usage error that names the command that checks it.
    const asDir = await verifyInProcess([save('recall-log4', saved.recall), '--log', tmpdir()]);
    assert.equal(asDir.status, 2, asDir.out);
    assert.match(asDir.out, /is a directory: check a whole log directory with `svc log verify/);
  });
});
