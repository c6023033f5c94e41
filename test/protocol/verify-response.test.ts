import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { HUNT_RANKING } from '../../src/protocol/hunt-ranking.js';
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
      const withFacts = Object.entries(saved)
        .filter(([, d]) => P.verifyResponse(d).facts.length > 0)
        .map(([n]) => n);
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

    it('reports a fact the receipt binds but the response left out (bound_not_shown)', () => {
      const doc = structuredClone(saved.recall) as { facts: { fact_cid: string }[] };
      const [gone] = doc.facts.splice(0, 1);
      const v = P.verifyResponse(doc, { publicKey: key });
      assert.equal(v.valid, false);
      assert.deepEqual(v.failures, ['bound_not_shown']);
      assert.match(v.errors[0], new RegExp(`^bound_not_shown: \\$\\.receipt binds ${gone.fact_cid}, which the response shows nowhere`));
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

describe('verifyResponse: what ask, hunt and memory search show', () => {
  it('checks the answer, the hotspots and the search results of untouched responses', () => {
    const checks = (name: string) => P.verifyResponse(saved[name], { publicKey: key }).checks.map((c) => `${c.check}:${c.ok}`);
    assert.deepEqual(checks('ask'), ['answer:true']);
    assert.deepEqual(checks('ask_hunt').sort(), ['answer:true', 'hotspots:true']);
    assert.deepEqual(checks('hunt'), ['hotspots:true']);
    assert.deepEqual(checks('memory_search'), ['search_results:true']);
    assert.deepEqual(checks('memory_search_hybrid'), ['search_results:true']);
  });

  it('an ask answer edited from "8000 metres" to "12 metres" fails as answer_mismatch, showing where', () => {
    const doc = structuredClone(saved.ask) as { answer: string; answer_md: string };
    assert.match(doc.answer, /Elevation 8000 metres above mean sea level/);
    doc.answer = doc.answer.replace('8000 metres', '12 metres');
    const v = P.verifyResponse(doc, { publicKey: key });
    assert.deepEqual(v.failures, ['answer_mismatch']);
    assert.match(v.errors[0], /"….*Elevation 12 metres.*" where the facts give ".*Elevation 8000 metres/);
  });

  it("a reading slipped into the answer's words is refused even when parts and text agree", () => {
    const doc = structuredClone(saved.ask) as any;
    doc.answer_parts.items[0].push(' (about 12 metres at the hut)');
    doc.answer = doc.answer.replace(/source fake\.$/, 'source fake (about 12 metres at the hut).');
    doc.answer_md = doc.answer_md.replace(/source fake\.$/, 'source fake (about 12 metres at the hut).');
    const v = P.verifyResponse(doc, { publicKey: key });
    assert.deepEqual(v.failures, ['answer_mismatch']);
    assert.match(v.errors.join('\n'), /the words "12 metres" print a reading/);
  });

  it("a hunt's hotspot value, cell and order are checked against its facts and the event's direction", () => {
    const hunt = saved.hunt as any;
    assert.ok(hunt.hotspots.length > 1);
    assert.deepEqual(
      hunt.receipt.fact_cids.slice(0, hunt.hotspots.length),
      hunt.hotspots.map((h: any) => h.fact_cid),
      'hotspots first, in rank order',
    );
    const value = structuredClone(hunt);
    value.hotspots[1].value = 99;
    assert.ok(P.verifyResponse(value, { publicKey: key }).failures.includes('hotspot_mismatch'));
    const swapped = structuredClone(hunt);
    [swapped.hotspots[0], swapped.hotspots[1]] = [swapped.hotspots[1], swapped.hotspots[0]];
    swapped.hotspots.forEach((h: any, i: number) => {
      h.rank = i + 1;
    });
    const v = P.verifyResponse(swapped, { publicKey: key });
    assert.deepEqual(v.failures, ['rank_mismatch']);
    assert.match(v.errors.join('\n'), /ranks before .* \(desc by indices\.dnbr\)/);
  });

  it("a search result's note, score and rank are checked against its note fact and the receipt's order", () => {
    const doc = structuredClone(saved.memory_search) as any;
    doc.results[0].note.text = 'The pump works fine';
    assert.deepEqual(P.verifyResponse(doc, { publicKey: key }).failures, ['result_mismatch']);
    const score = structuredClone(saved.memory_search) as any;
    score.results[2].score = score.results[2].text_score = 0.99;
    assert.deepEqual(P.verifyResponse(score, { publicKey: key }).failures, ['score_inconsistent']);
    const order = structuredClone(saved.memory_search) as any;
    order.results.reverse();
    assert.ok(P.verifyResponse(order, { publicKey: key }).failures.includes('rank_mismatch'));
  });

  it("the hunt ranking table is the registry's: each event's primary band and direction", async () => {
    const { loadRegistry } = await import('../../src/registry/registry.js');
    const reg = loadRegistry();
    const fromRegistry = Object.fromEntries(reg.huntEventList.filter((e) => e.algorithm && e.rank).map((e) => [e.event, { band: reg.algorithms.get(e.algorithm!)!.bands[0], rank: e.rank }]));
    assert.deepEqual({ ...HUNT_RANKING }, fromRegistry);
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
    // A saved answer wrapped as {response: …} is the answer itself, not a receipt-less body.
    const wrapped = (await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: { response: saved.recall } as object })).json();
    assert.equal(wrapped.valid, true, wrapped.errors.join('; '));
    assert.equal(wrapped.response.facts.length, 2);
    const wrappedBad = (await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: { response: bad } as object })).json();
    assert.equal(wrappedBad.valid, false);
  });

  it('labels a manifest this responder never published as an advisory, not a failure', async () => {
    const r = structuredClone((saved.corpus_state_stats as { receipt: Record<string, unknown> }).receipt);
    r.registry_cid = P.b32encode(new Uint8Array(32).fill(1));
    const out = (await t.app.inject({ method: 'POST', url: '/v1/verify_receipt', payload: r })).json();
    assert.equal(out.valid, true);
    assert.deepEqual(
      out.advisories.map((a: { code: string; advisory: boolean }) => [a.code, a.advisory]),
      [['registry_cid_unknown', true]],
    );
  });
});
