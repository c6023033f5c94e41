import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { editsOf, fixtureApp, savedResponses } from '../support/tamper.js';
import type { TestApp } from '../support/app.js';

let t: TestApp;
let key: string;
let saved: Record<string, unknown>;
before(async () => {
  ({ t, key } = await fixtureApp());
  saved = await savedResponses(t);
});
after(async () => t?.close());

describe('verifyResponse (protocol.md §4–§6)', () => {
  describe('when a saved response is untouched', () => {
    it('accepts the response of every read primitive, facts recomputed and bound', () => {
      for (const [name, doc] of Object.entries(saved)) {
        const v = P.verifyResponse(doc, { publicKey: key });
        assert.equal(v.valid && v.trusted, true, `${name}: ${v.errors.join('; ')}`);
        for (const f of v.facts) assert.equal(f.recomputed_cid, f.fact_cid, `${name} ${f.path}`);
      }
      const withFacts = Object.entries(saved).filter(([, d]) => P.verifyResponse(d).facts.length > 0).map(([n]) => n);
      assert.ok(withFacts.length >= 9, `facts checked in ${withFacts.join(', ')}`);
    });

    it('shows who signed each fact and its log position beside the bodies (fact_meta)', () => {
      const v = P.verifyResponse(saved.recall, { publicKey: key });
      const temp = v.facts.find((f) => f.band === 'weather.temperature_2m')!;
      const elev = v.facts.find((f) => f.band === 'copdem30m.elevation_mean')!;
      assert.equal(temp.meta?.attester_role, 'operator');
      assert.equal(typeof temp.meta?.log_index, 'number');
      assert.equal(elev.meta?.attester, key);
      assert.equal(elev.meta?.attester_role, 'responder');
      assert.equal(elev.meta?.source, 'fake');
      assert.equal(elev.meta?.function, 'fake@1');
    });
  });

  describe('when one field was changed', () => {
    it('rejects every edit of a fact, a receipt, a merkle sibling or a cited fact_cid, naming what failed', () => {
      let n = 0;
      for (const [name, doc] of Object.entries(saved)) {
        for (const e of editsOf(name, doc)) {
          const v = P.verifyResponse(e.doc, { publicKey: key });
          assert.equal(v.valid, false, `${e.primitive}: ${e.what} was accepted`);
          assert.ok(v.errors.length > 0, `${e.primitive}: ${e.what} gave no reason`);
          n++;
        }
      }
      assert.ok(n > 150, `${n} edits`);
    });

    it('names the fact whose value changed', () => {
      const doc = structuredClone(saved.recall) as { facts: { value: number; band: string }[] };
      const i = doc.facts.findIndex((f) => f.band === 'weather.temperature_2m');
      doc.facts[i].value = 99;
      const v = P.verifyResponse(doc, { publicKey: key });
      assert.deepEqual(v.failures, ['cid_mismatch']);
      assert.match(v.errors[0], new RegExp(`\\$\\.facts\\[${i}\\] \\(weather\\.temperature_2m at `));
      assert.equal(v.facts[i].ok, false);
      assert.equal(v.facts.filter((f) => f.ok).length, v.facts.length - 1);
    });

    it('refuses a fact filed under another cell in by_cell', () => {
      const doc = structuredClone(saved.recall_many) as { by_cell: Record<string, { facts: unknown[] }> };
      const [a, b] = Object.keys(doc.by_cell);
      doc.by_cell[a].facts.push(doc.by_cell[b].facts[0]);
      const v = P.verifyResponse(doc, { publicKey: key });
      assert.equal(v.valid, false);
      assert.ok(v.failures.includes('cell_mismatch'), v.errors.join('; '));
    });
  });

  describe('when given a bare receipt or something else', () => {
    it('verifies a bare receipt as before, and reports a document without receipts', () => {
      const r = (saved.corpus_state_stats as { receipt: unknown }).receipt;
      const v = P.verifyResponse(r, { publicKey: key });
      assert.equal(v.bare_receipt, true);
      assert.equal(v.valid, true);
      assert.deepEqual(P.verifyResponse({ hello: 1 }).failures, ['no_receipt']);
    });

    it('is untrusted (but valid) under another pinned key', () => {
      const v = P.verifyResponse(saved.recall, { publicKey: P.b32encode(new Uint8Array(32).fill(7)) });
      assert.equal(v.valid, true);
      assert.equal(v.trusted, false);
      assert.ok(v.failures.includes('untrusted_key'));
    });

    it('does not mutate its input', () => {
      const before = JSON.stringify(saved.recall_many);
      P.verifyResponse(saved.recall_many);
      assert.equal(JSON.stringify(saved.recall_many), before);
    });
  });
});

describe('POST /v1/verify_receipt with a whole response', () => {
  it('answers per fact and per receipt, valid only when every fact is bound', async () => {
    const ok = (await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: saved.recall as object })).json();
    assert.equal(ok.valid, true, ok.errors.join('; '));
    assert.equal(ok.response.facts.length, 2);
    assert.deepEqual(ok.advisories, []);
    const bad = structuredClone(saved.recall) as { facts: { unit: string }[] };
    bad.facts[0].unit = 'furlongs';
    const no = (await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: bad })).json();
    assert.equal(no.valid, false);
    assert.ok(no.failures.includes('cid_mismatch'));
  });

  it('labels a manifest this responder never published as an advisory, not a failure', async () => {
    const r = structuredClone((saved.corpus_state_stats as { receipt: Record<string, unknown> }).receipt);
    r.registry_cid = P.b32encode(new Uint8Array(32).fill(1));
    const out = (await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: r })).json();
    assert.equal(out.valid, true);
    assert.deepEqual(out.advisories.map((a: { code: string; advisory: boolean }) => [a.code, a.advisory]), [['registry_cid_unknown', true]]);
  });
});
