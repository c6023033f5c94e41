/**
 * Note words as the stores index and search them (docs/memory.md): the embedded store's own
 * tokenizer and FTS5 agree on every word, whatever Unicode it holds; a word that reached another
 * scope's posting list anyway could never count in that scope's results; and PostgreSQL
 * lowercases query words with the function that lowercased the notes.
 */
import { seededRandom } from '../../src/geo/geometry.js';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { b32decode } from '../../src/protocol/base32.js';
import { anchorId, factCid } from '../../src/protocol/cid.js';
import type { Scope } from '../../src/protocol/receipt.js';
import { FTS_TOKENIZE, NOTE_TOKENIZE, indexedWords, queryTerms, queryWords, textWords } from '../../src/store/sqlite/memory-text.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeBatch, makeFact, testSigner } from './support/facts.js';
import { logOpener } from './support/log-factory.js';
import { openPgStore, pgSkip } from './support/pg-env.js';
import { searchText } from './support/note-search.js';
import { termOf } from '../../src/store/note-terms.js';

const note = (text: string, scope?: Scope) => {
  const value = { text };
  return makeFact({ cell: `svc:entity:${anchorId(value)}`, band: 'memory.note', tslot: 0, value, unit: 'record', scope });
};

/** Deterministic PRNG (mulberry32), so a failure names a reproducible string. */
const prng = seededRandom;

/**
 * Ranges where word rules disagree: ASCII syntax, Latin with precomposed and combining accents,
 * Greek (final sigma), Indic and Southeast Asian marks, New Tai Lue and Vedic signs (letters to
 * recent Unicode, separators to FTS5's unicode61), Mongolian selectors, zero-width and format
 * characters, enclosing marks, letterlike symbols, fullwidth forms, private use, variation
 * selectors, astral letters and digits, tags, lone surrogates.
 */
const RANGES: Array<[number, number]> = [
  [0x20, 0x7e],
  [0x30, 0x39],
  [0xa0, 0x24f],
  [0x2b0, 0x36f],
  [0x370, 0x3ff],
  [0x400, 0x52f],
  [0x590, 0x6ff],
  [0x900, 0x97f],
  [0xe00, 0xe7f],
  [0x1100, 0x11ff],
  [0x1800, 0x18af],
  [0x1980, 0x19df],
  [0x1a00, 0x1aff],
  [0x1cd0, 0x1cff],
  [0x1dc0, 0x1dff],
  [0x1e00, 0x1fff],
  [0x2000, 0x206f],
  [0x20d0, 0x20ff],
  [0x2100, 0x218f],
  [0x2460, 0x24ff],
  [0x3040, 0x30ff],
  [0x4e00, 0x4e3f],
  [0xa980, 0xa9df],
  [0xac00, 0xac3f],
  [0xd800, 0xdfff],
  [0xe000, 0xe01f],
  [0xfb00, 0xfb4f],
  [0xfe00, 0xfe2f],
  [0xff00, 0xffef],
  [0x10400, 0x1044f],
  [0x11000, 0x1107f],
  [0x1d400, 0x1d4ff],
  [0x1e900, 0x1e95f],
  [0x1f100, 0x1f1ff],
  [0xe0000, 0xe007f],
];
const SPECIAL = ['İ', 'ı', 'ß', 'ẞ', 'Σ', 'ς', 'ǅ', '\u212a', '\u212b', '\u0345', '\u19b0', '\u19c8', '\u1cf2', 'q', '"', '*', ':', '_', '-', ' '];

function randomText(rnd: () => number): string {
  const n = 1 + Math.floor(rnd() * 24);
  let s = '';
  for (let i = 0; i < n; i++) {
    if (rnd() < 0.25) {
      s += SPECIAL[Math.floor(rnd() * SPECIAL.length)];
      continue;
    }
    const [lo, hi] = RANGES[Math.floor(rnd() * RANGES.length)];
    s += String.fromCodePoint(lo + Math.floor(rnd() * (hi - lo + 1)));
  }
  return s;
}

describe('sqlite note words: the service tokenizer and FTS5 agree', () => {
  it('every indexed word is one FTS5 token, with its scope prefix, and its query term finds it (random tricky Unicode)', () => {
    const db = new Database(':memory:');
    try {
      // `ascii` alone shows the tokens exactly; FTS_TOKENIZE (porter on top) is what the index uses.
      db.exec(`CREATE VIRTUAL TABLE plain USING fts5(words, content='', tokenize='ascii');
               CREATE VIRTUAL TABLE real USING fts5(words, content='', tokenize='${FTS_TOKENIZE}');
               CREATE VIRTUAL TABLE plain_v USING fts5vocab(plain, 'instance');
               CREATE VIRTUAL TABLE real_v USING fts5vocab(real, 'instance');`);
      const addPlain = db.prepare('INSERT INTO plain (rowid, words) VALUES (?, ?)');
      const addReal = db.prepare('INSERT INTO real (rowid, words) VALUES (?, ?)');
      const tokensOf = (table: 'plain_v' | 'real_v', doc: number) => db.prepare(`SELECT term FROM ${table} WHERE doc = ? ORDER BY offset`).pluck().all(doc) as string[];
      const find = db.prepare('SELECT rowid FROM real WHERE real MATCH ?').pluck();
      const rnd = prng(0x5eed);
      let words = 0;
      for (let doc = 1; doc <= 3000; doc++) {
        const text = randomText(rnd);
        const scopeId = Math.floor(rnd() * 100_000);
        const expected = [...textWords(text)].map((w) => `${scopeId}q${w}`);
        const indexed = indexedWords(scopeId, text);
        addPlain.run(doc, indexed);
        addReal.run(doc, indexed);
        const label = `${JSON.stringify(text)} (scope ${scopeId})`;
        assert.deepEqual(tokensOf('plain_v', doc), expected, label);
        const stemmed = tokensOf('real_v', doc);
        assert.equal(stemmed.length, expected.length, label);
        assert.ok(
          stemmed.every((t) => t.startsWith(`${scopeId}q`)),
          label,
        );
        for (const term of queryTerms(scopeId, queryWords(text))) {
          assert.ok((find.all(term) as number[]).includes(doc), `${label}: ${term}`);
        }
        words += expected.length;
      }
      assert.ok(words > 3000, 'the strings held words');
    } finally {
      db.close();
    }
  });

  it('folds case and diacritics itself, the same in notes and queries', () => {
    assert.deepEqual([...textWords('İstanbul ISTANBUL istanbul')], ['istanbul', 'istanbul', 'istanbul']);
    assert.deepEqual([...textWords('Café cafe\u0301 CAFÉ')], ['cafe', 'cafe', 'cafe']);
    assert.deepEqual([...textWords('ΟΔΟΣ οδος')], ['οδοσ', 'οδοσ']);
    assert.deepEqual(queryWords('\u19b0x\u19b02qpump'), ['\u19b0x\u19b02qpump'], 'one word, as it is indexed');
    assert.deepEqual(queryWords('नमस्ते'), ['नमस्ते'], 'spelling marks stay in the word');
  });
});

describe("sqlite notes: a word in another scope's posting list never counts there", () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-memory-text-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it("keeps the scope's results when public notes carry its prefixed words (a simulated tokenizer disagreement)", async () => {
    const logs = await logOpener(testSigner());
    const open = async () => createSqliteStore({ dataDir: root, scanCellLimit: 1000 }, await logs.open(join(root, 'log')), { logger: () => {} });
    let store = await open();
    const A: Scope = { agent_id: 'text-agent-a' };
    try {
      const s1 = note('pump valve pump house', A);
      const s2 = note('valve check at the house', A);
      await store.append(makeBatch([s1, s2], { provenance_class: 'human_curated', sign: false }));
      const publicNotes: Record<string, unknown>[] = [];
      for (let b = 0; b < 9; b++) {
        const bodies = Array.from({ length: 460 }, (_, i) => note(`public ${b} ${i}`));
        publicNotes.push(...bodies);
        await store.append(makeBatch(bodies, { provenance_class: 'human_curated', sign: false }));
      }
      const before = await searchText(store, { scope: A, text: 'pump valve', limit: 10 });
      assert.deepEqual(
        before.map((h) => h.fact_cid),
        [factCid(s1), factCid(s2)],
      );

      // What a split word would leave behind: the public notes' rows under scope A's terms
      // (written with the store closed, which holds the index file).
      await store.close();
      const db = new Database(join(root, 'index.sqlite'));
      try {
        assert.match(db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'notes_fts'`).pluck().get() as string, new RegExp(`tokenize='${NOTE_TOKENIZE}'`));
        const idOf = db.prepare('SELECT id, scope_id FROM notes WHERE cid = ?');
        const scoped = idOf.get(b32decode(factCid(s1), 32)) as { id: number; scope_id: number };
        const plant = db.prepare('INSERT INTO notes_fts (rowid, words) VALUES (?, ?)');
        db.transaction(() => {
          for (const n of publicNotes) {
            const row = idOf.get(b32decode(factCid(n), 32)) as { id: number; scope_id: number };
            assert.notEqual(row.scope_id, scoped.scope_id);
            plant.run(row.id, `${scoped.scope_id}q${termOf('pump')} ${scoped.scope_id}q${termOf('valve')}`);
          }
        })();
      } finally {
        db.close();
        store = await open();
      }
      const afterPlant = await searchText(store, { scope: A, text: 'pump valve', limit: 10 });
      assert.deepEqual(
        afterPlant.map((h) => h.fact_cid),
        [factCid(s1), factCid(s2)],
        "the scope's own notes, still ranked exactly",
      );
      for (const text of ['pump', 'valve']) {
        assert.ok(
          (await searchText(store, { scope: A, text, limit: 50 })).every((h) => h.fact_cid === factCid(s1) || h.fact_cid === factCid(s2)),
          text,
        );
      }
    } finally {
      await store.close();
    }
  });
});

describe('postgres notes: words are folded by the service, as on SQLite', { skip: pgSkip }, () => {
  it('finds İstanbul by İstanbul, İSTANBUL and istanbul, whatever the database lowercases', async () => {
    const { store, cleanup } = await openPgStore(testSigner());
    try {
      const n = note('Ferry from İstanbul at dawn, up ΟΔΟΣ ΑΘΗΝΑΣ');
      await store.append(makeBatch([n], { provenance_class: 'human_curated', sign: false }));
      const found = async (text: string) => (await searchText(store, { scope: null, text, limit: 5 })).some((h) => h.fact_cid === factCid(n));
      for (const text of ['İstanbul', 'İSTANBUL', 'ΟΔΟΣ', 'ferry']) assert.ok(await found(text), text);
      assert.ok(await found('istanbul'), 'istanbul');
      assert.ok(await found('οδος'), 'οδος');
    } finally {
      await cleanup();
    }
  });
});
