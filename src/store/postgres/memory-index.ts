/**
 * Write side of the agent-memory index (src/store/memory.ts) in the PostgreSQL driver. The
 * sequencer hands every fact it stores for the first time, in log order, to a `MemoryIndexer`,
 * and the rows it collects go into the same INSERT statement as the fact rows, so the memory
 * index commits or rolls back with the log entry and every responder sharing the schema sees it.
 *
 * Cost model: only facts that can project anything (band `memory.*`, kind derivative) are
 * looked at; a group without any gets no indexer, and the sequencer's two statements stay the
 * plain ones. A group with memory facts still runs two statements: what the closure rule needs
 * from the index (the exclusive-kind siblings and the edges named in `invalidates`) and the
 * next derivation `seq` are fetched by extra columns of the sequencer's state read, and the
 * memory rows travel as one JSON parameter per table in its INSERT.
 *
 * The same indexer rebuilds the index of a schema written before these tables existed
 * (`backfillMemory`, run once by the migration), so the index stays a function of the log.
 */
import { decodeTrusted } from '../../protocol/cbor.js';
import { EXCLUSIVE_EDGE_TYPES, edgeClosures, projectMemory, type IndexedEdge, type MemoryRows } from '../memory.js';
import { documentTerms, noteDocument, packDocument } from '../note-terms.js';
import { countedKeySql, scopeCode, tagKey, termKey } from './memory-keys.js';
import { int, rows, type Db } from './pg-db.js';
import type { Tables } from './tables.js';

/** Whether a fact may project memory rows: everything else is skipped without a look at its body. */
export function mayProject(kind: string, band: string): boolean {
  return kind === 'derivative' || band.startsWith('memory.');
}

/** A fact being stored for the first time, as the memory index needs it. */
export interface MemFact {
  cid: string;
  attester: string;
  scopeKey: string;
  acceptedAt: string;
  logIndex: number;
  position: number;
}

/** Float32 vector as little-endian bytes (bytea): compact, and exact on the way back. */
export function vectorBytes(v: Float32Array): Buffer {
  const b = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i], i * 4);
  return b;
}

/** The vector stored by `vectorBytes`. */
export function vectorOf(b: Buffer | null): Float32Array | null {
  if (b === null) return null;
  const v = new Float32Array(b.length >>> 2);
  for (let i = 0; i < v.length; i++) v[i] = b.readFloatLE(i * 4);
  return v;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Body text as a PostgreSQL text value: NUL, which `text` cannot hold, is dropped, and a lone
 * surrogate becomes U+FFFD (as UTF-8 encoding does). The write path does not refuse either, and
 * a projection must never fail the transaction that stores the fact.
 */
export function pgText(s: string): string {
  return s.replace(/\u0000/g, '').replace(LONE_SURROGATE, '\ufffd');
}

const exclusiveKey = (scope: string, kind: string, from: string): string => `${scope}\u0000${kind}\u0000${from}`;

/** [edge_cid, scope_key, kind, from, to, valid_from] as the state read returns indexed edges. */
type EdgeTuple = [string, string, string, string, string, number, string];

/**
 * Projections of one group (or one backfill page) and the rows they add, in log order. Closures
 * are computed here, against the edges indexed before each new one: those already in the table
 * (fetched by `lookupSql`) plus the ones this group added earlier, so a group gives exactly the
 * rows its batches would give one at a time.
 */
export class MemoryIndexer {
  private readonly projections = new Map<string, MemoryRows>();
  /** Indexed edges per (scope, exclusive kind, from): the exclusive rule's candidates. */
  private readonly siblings = new Map<string, IndexedEdge[]>();
  /** Indexed edges by cid (with their scope) that some `invalidates` of the group names. */
  private readonly byCid = new Map<string, { scope: string; edge: IndexedEdge }>();
  private readonly lookup = { scope: [] as string[], kind: [] as string[], from: [] as string[], named: new Set<string>() };
  private seq = 0;
  private readonly out = {
    notes: [] as unknown[],
    aliases: [] as unknown[],
    edges: [] as unknown[],
    closures: [] as unknown[],
    derivations: [] as unknown[],
  };

  /**
   * An indexer over the facts of a group that may project (see `mayProject`), or null when none
   * projects anything. Facts that turn out to be stored already are projected for nothing,
   * which is cheap and keeps the state read to one statement.
   */
  static plan(facts: Iterable<{ cid: string; body: Record<string, unknown>; scopeKey: string }>): MemoryIndexer | null {
    let ix: MemoryIndexer | null = null;
    for (const f of facts) {
      if (ix?.projections.has(f.cid)) continue;
      const p = projectMemory(f.body, f.cid);
      if (p === null) continue;
      ix ??= new MemoryIndexer();
      ix.projections.set(f.cid, p);
      for (const e of p.edges ?? []) {
        for (const c of e.invalidates) ix.lookup.named.add(c);
        if (!EXCLUSIVE_EDGE_TYPES.has(e.kind)) continue;
        const k = exclusiveKey(f.scopeKey, e.kind, e.from);
        if (ix.siblings.has(k)) continue;
        ix.siblings.set(k, []);
        ix.lookup.scope.push(f.scopeKey);
        ix.lookup.kind.push(e.kind);
        ix.lookup.from.push(e.from);
      }
    }
    return ix;
  }

  /**
   * Extra columns for the state read (parameters from `$first`): `mem_edges`, the indexed edges
   * the closure rule may need, and `mem_seq`, the last derivation seq.
   */
  static lookupSql(t: Tables, first: number): string {
    const p = (i: number) => `$${first + i}`;
    return `(SELECT coalesce(json_agg(json_build_array(x.edge_cid, x.scope_key, x.kind, x.from_ref, x.to_ref, x.valid_from, x.attester)), '[]') FROM (
           SELECT e.edge_cid, e.scope_key, e.kind, e.from_ref, e.to_ref, e.valid_from, e.attester
             FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[]) AS k(scope_key, kind, from_ref)
             JOIN ${t.memEdges} e ON e.scope_key = k.scope_key AND e.from_ref = k.from_ref AND e.kind = k.kind
           UNION
           SELECT edge_cid, scope_key, kind, from_ref, to_ref, valid_from, attester FROM ${t.memEdges} WHERE edge_cid = ANY(${p(3)}::text[])) x) AS mem_edges,
         (SELECT coalesce(max(seq), 0) FROM ${t.derivations}) AS mem_seq`;
  }

  /** Parameters of `lookupSql`, in order. */
  lookupParams(): unknown[] {
    return [this.lookup.scope, this.lookup.kind, this.lookup.from, [...this.lookup.named]];
  }

  /** Take in what `lookupSql` returned. */
  load(edges: EdgeTuple[], lastSeq: string | number): void {
    for (const [edge_cid, scope, kind, from, to, validFrom, attester] of edges) {
      const edge: IndexedEdge = { edge_cid, kind, from, to, valid_from: Number(validFrom), attester };
      if (this.lookup.named.has(edge_cid)) this.byCid.set(edge_cid, { scope, edge });
      this.siblings.get(exclusiveKey(scope, kind, from))?.push(edge);
    }
    this.seq = int(lastSeq);
  }

  /** Whether `cid` has a projection (only those need `add`). */
  has(cid: string): boolean {
    return this.projections.has(cid);
  }

  /** Index one fact stored for the first time; call in log order. */
  add(f: MemFact): void {
    const p = this.projections.get(f.cid);
    if (p === undefined) return;
    if (p.note) {
      const n = p.note;
      const doc = noteDocument(n.text, n.speaker, n.tags);
      this.out.notes.push({
        c: f.cid,
        s: f.scopeKey,
        a: f.attester,
        at: f.acceptedAt,
        li: f.logIndex,
        p: f.position,
        o: n.observed_at,
        ce: n.cell,
        la: n.lat,
        ln: n.lng,
        en: n.entity,
        tg: n.tags.map(pgText),
        v: n.vector === null ? null : vectorBytes(n.vector).toString('hex'),
        th: n.thread === null ? null : pgText(n.thread),
        d: pgText(packDocument(doc)),
        tm: noteKeys(f.scopeKey, documentTerms(doc), n.tags),
        l: doc.text.length,
      });
    }
    if (p.alias) {
      this.out.aliases.push({ c: f.cid, s: f.scopeKey, en: p.alias.entity, ph: pgText(p.alias.phrase), a: f.attester, li: f.logIndex, p: f.position });
    }
    if (p.derivation) this.out.derivations.push({ q: ++this.seq, a: f.attester, s: f.scopeKey, c: f.cid });
    (p.edges ?? []).forEach((e, ord) => {
      const exclusive = EXCLUSIVE_EDGE_TYPES.has(e.kind);
      const k = exclusiveKey(f.scopeKey, e.kind, e.from);
      const named: IndexedEdge[] = [];
      for (const c of e.invalidates) {
        const hit = this.byCid.get(c);
        if (hit !== undefined && hit.scope === f.scopeKey) named.push(hit.edge);
      }
      for (const c of edgeClosures(e, f.attester, exclusive ? (this.siblings.get(k) ?? []) : [], named)) {
        // Recorded at the closer's transaction time: a recorded_at bound before it hides it.
        this.out.closures.push({ e: c.edge_cid, ca: c.closed_at, cb: c.closed_by, at: f.acceptedAt, li: f.logIndex, p: f.position });
      }
      this.out.edges.push({
        e: e.edge_cid,
        s: f.scopeKey,
        k: pgText(e.kind),
        f: e.from,
        t: e.to,
        vf: e.valid_from,
        vt: e.valid_to,
        sb: e.stated_by,
        a: f.attester,
        at: f.acceptedAt,
        li: f.logIndex,
        p: f.position,
        o: ord,
      });
      // Indexed from now on, for the group's later edges.
      const edge: IndexedEdge = { edge_cid: e.edge_cid, kind: e.kind, from: e.from, to: e.to, valid_from: e.valid_from, attester: f.attester };
      this.byCid.set(e.edge_cid, { scope: f.scopeKey, edge });
      if (exclusive) {
        let list = this.siblings.get(k);
        if (list === undefined) this.siblings.set(k, (list = []));
        list.push(edge);
      }
    });
  }

  /** Whether `add` produced any row. */
  hasRows(): boolean {
    const o = this.out;
    return o.notes.length + o.aliases.length + o.edges.length + o.closures.length + o.derivations.length > 0;
  }

  /**
   * INSERT CTEs writing the collected rows (parameters from `$first`, one JSON array per table),
   * to be joined into the sequencer's statement; the names are `m1`..`m7`. The notes actually
   * inserted (m1's RETURNING) add to their scope's term and note counts (m6, m7), so a note
   * stored twice never counts twice.
   */
  static insertCtes(t: Tables, first: number): string {
    const p = (i: number) => `$${first + i}::json`;
    return `m1 AS (
         INSERT INTO ${t.notes} (fact_cid, scope_key, attester, accepted_at, log_index, position, observed_at, cell, lat, lng, entity, tags, vector, thread, doc, keys, length)
         SELECT c, s, a, at, li, p, o, ce, la, ln, en, ARRAY(SELECT json_array_elements_text(tg)), decode(v, 'hex'), th, d, ARRAY(SELECT json_array_elements_text(tm)), l
           FROM json_to_recordset(${p(0)}) AS x(c text, s text, a text, at text, li bigint, p int, o bigint, ce text, la float8, ln float8, en text, tg json, v text, th text, d text, tm json, l int)
         ON CONFLICT DO NOTHING RETURNING scope_key, keys, length),
       m6 AS (
         INSERT INTO ${t.noteDf} AS d (scope_key, term, df)
         SELECT scope_key, ${countedKeySql('k')}, count(*) FROM m1, unnest(m1.keys) AS k GROUP BY 1, 2
         ON CONFLICT (scope_key, term) DO UPDATE SET df = d.df + excluded.df),
       m7 AS (
         INSERT INTO ${t.noteStats} AS n (scope_key, notes, tokens)
         SELECT scope_key, count(*), sum(length) FROM m1 GROUP BY 1
         ON CONFLICT (scope_key) DO UPDATE SET notes = n.notes + excluded.notes, tokens = n.tokens + excluded.tokens),
       m2 AS (
         INSERT INTO ${t.aliases} (fact_cid, scope_key, entity, phrase, attester, log_index, position)
         SELECT c, s, en, ph, a, li, p FROM json_to_recordset(${p(1)}) AS x(c text, s text, en text, ph text, a text, li bigint, p int)
         ON CONFLICT DO NOTHING),
       m3 AS (
         INSERT INTO ${t.memEdges} (edge_cid, scope_key, kind, from_ref, to_ref, valid_from, valid_to, stated_by, attester, recorded_at, log_index, position, ord)
         SELECT e, s, k, f, t, vf, vt, sb, a, at, li, p, o
           FROM json_to_recordset(${p(2)}) AS x(e text, s text, k text, f text, t text, vf bigint, vt bigint, sb text, a text, at text, li bigint, p int, o int)
         ON CONFLICT DO NOTHING),
       m4 AS (
         INSERT INTO ${t.closures} (edge_cid, closed_at, closed_by, recorded_at, log_index, position)
         SELECT e, ca, cb, at, li, p FROM json_to_recordset(${p(3)}) AS x(e text, ca bigint, cb text, at text, li bigint, p int)
         ON CONFLICT DO NOTHING),
       m5 AS (
         INSERT INTO ${t.derivations} (seq, attester, scope_key, fact_cid)
         SELECT q, a, s, c FROM json_to_recordset(${p(4)}) AS x(q bigint, a text, s text, c text))`;
  }

  /** Parameters of `insertCtes`, in order. */
  insertParams(): string[] {
    const o = this.out;
    return [o.notes, o.aliases, o.edges, o.closures, o.derivations].map((x) => JSON.stringify(x));
  }
}

/** Facts per backfill page: bounded memory, and each page is two statements. */
const BACKFILL_PAGE = 2000;

/**
 * Build the memory index and the shared slots from the facts already stored, in log order (a
 * schema created by a build without them). Runs inside the migration's transaction, under the
 * sequencer lock, so no writer adds facts meanwhile. Returns the facts projected. `notesOnly`:
 * the notes alone, into an emptied notes table (a version-2 schema, whose notes had another shape).
 */
export async function backfillMemory(db: Db, t: Tables, opts: { notesOnly?: boolean } = {}): Promise<number> {
  // Shared slots: every key with two distinct attesters, in one statement.
  if (!opts.notesOnly)
    await rows(
      db,
      `INSERT INTO ${t.sharedSlots} (scope_key, cell, band, tslot)
     SELECT scope_key, cell, band, tslot FROM ${t.facts} GROUP BY 1, 2, 3, 4 HAVING count(DISTINCT attester) > 1
     ON CONFLICT DO NOTHING`,
    );
  let after: [number, number] = [-1, -1];
  let done = 0;
  for (;;) {
    const page = await rows<{ fact_cid: string; body: Buffer; attester: string; scope_key: string; accepted_at: string; log_index: string; position: number }>(
      db,
      `SELECT fact_cid, body, attester, scope_key, accepted_at, log_index, position FROM ${t.facts}
        WHERE ${opts.notesOnly ? `band = 'memory.note'` : `(kind = 'derivative' OR band LIKE 'memory.%')`} AND (log_index, position) > ($1, $2)
        ORDER BY log_index, position LIMIT ${BACKFILL_PAGE}`,
      after,
    );
    if (page.length === 0) return done;
    const facts = page.map((r) => ({
      cid: r.fact_cid,
      body: decodeTrusted(new Uint8Array(r.body.buffer, r.body.byteOffset, r.body.byteLength)) as Record<string, unknown>,
      attester: r.attester,
      scopeKey: r.scope_key,
      acceptedAt: r.accepted_at,
      logIndex: int(r.log_index),
      position: r.position,
    }));
    const last = facts[facts.length - 1];
    after = [last.logIndex, last.position];
    const ix = MemoryIndexer.plan(facts);
    if (ix === null) continue;
    const [state] = await rows<{ mem_edges: EdgeTuple[]; mem_seq: string }>(db, `SELECT ${MemoryIndexer.lookupSql(t, 1)}`, ix.lookupParams());
    ix.load(state.mem_edges, state.mem_seq);
    for (const f of facts) if (ix.has(f.cid)) ix.add(f);
    if (!ix.hasRows()) continue;
    await rows(db, `WITH ${MemoryIndexer.insertCtes(t, 1)} SELECT 1`, ix.insertParams());
    done += facts.filter((f) => ix.has(f.cid)).length;
  }
}

/** A note's search keys (memory-keys.ts): its distinct terms and its tags, under its scope's code. */
function noteKeys(scopeKey: string, terms: readonly string[], tags: readonly string[]): string[] {
  const code = scopeCode(scopeKey);
  return [...terms.map((t) => termKey(code, pgText(t))), ...[...new Set(tags)].map((g) => tagKey(code, pgText(g)))];
}
