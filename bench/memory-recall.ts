/**
 * `npm run bench memory-recall`: recall of POST /v1/memory/search over long synthetic
 * conversations (bench/memory-eval/), next to a plain BM25 baseline on the same questions.
 *
 * Each conversation (dev: 6, held-out: 4, generated from fixed seeds; corpus.ts) is written into a
 * scope of its own (`{agent_id: <conversation id>}`), one note per turn: `{text, speaker, thread:
 * <session id>, observed_at, vector}`, 256 per signed batch. Every question is then searched
 * with its scope's bearer, `limit: 25`, in three modes: `text` (`query`), `hybrid` (`query` +
 * `vector`, default weights) and `vector` (`vector` only); on dev only, also hybrid with text
 * weights from `--sweep`. The vectors come from a synthetic stand-in encoder (encoder.ts) that
 * knows the generator's paraphrase groups: hybrid and vector figures are an upper-ish bound.
 *
 * Prints one JSON object on stdout (progress on stderr): per store × split × mode recall@5/10/25
 * (any evidence turn in the top k), all@10 for multi_hop, recall@10 per question type, the BM25
 * baselines' same figures, ratios against BM25, and search latency p50/p99 measured around
 * fastify inject in process (no socket).
 *
 *   node --import tsx bench/memory-recall.ts [--stores=sqlite,postgres] [--sweep=0.3,0.7]
 *   node --import tsx bench/memory-recall.ts --scale=100000 [--scale-questions=500]
 *
 * Stores: sqlite, plus postgres when SVC_TEST_DATABASE_URL is set (or named in --stores; the URL
 * then defaults to postgres://postgres@127.0.0.1:5432/test). `--scale=N` runs only the scale
 * case: N notes in one scope, then text and hybrid search latency over 500 questions.
 */
import { parseArgs } from 'node:util';
import type * as P from '../src/protocol/index.js';
import { makeAttester } from '../test/support/attester.js';
import { percentiles, seededRandom } from './harness.js';
import { Bm25Index } from './memory-eval/bm25.js';
import { MemoryClient, NOTES_PER_WRITE, type NoteInput, type SearchOutcome } from './memory-eval/client.js';
import { type Conversation, corpusHash, DEV_SPLIT, generateCorpus, HELD_OUT_SPLIT, type Question, type SplitSpec, splitCorpus } from './memory-eval/corpus.js';
import { ConceptEncoder, ENCODER_DIM, ENCODER_LABEL, ENCODER_MISS_RATE } from './memory-eval/encoder.js';
import { type Ranked, type RecallSummary, ratio, summarise } from './memory-eval/metrics.js';

const { values: opt } = parseArgs({
  options: {
    stores: { type: 'string' },
    sweep: { type: 'string', default: '0.3,0.7' },
    scale: { type: 'string' },
    'scale-questions': { type: 'string', default: '500' },
  },
});
const LIMIT = 25;
/** Batches between progress lines while the scale case writes. */
const NOTES_LOG = 40;
const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const progress = (line: string) => process.stderr.write(`[memory-recall] ${line}\n`);

type StoreName = 'sqlite' | 'postgres';
const stores: StoreName[] = opt.stores ? (opt.stores.split(',').map((s) => s.trim()) as StoreName[]) : process.env.SVC_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
for (const s of stores) if (s !== 'sqlite' && s !== 'postgres') throw new Error(`--stores: unknown store ${s}`);
if (stores.includes('postgres') && !process.env.SVC_TEST_DATABASE_URL) process.env.SVC_TEST_DATABASE_URL = DEFAULT_PG_URL;
// The test support reads SVC_TEST_DATABASE_URL when it is loaded: load it only now.
const { build } = await import('../test/support/app.js');

const sweep = opt.sweep
  .split(',')
  .filter((s) => s.trim() !== '')
  .map(Number);
for (const w of sweep) if (!(w >= 0 && w <= 1)) throw new Error(`--sweep: text weights lie in 0..1, got ${w}`);

const encoder = new ConceptEncoder();
const agent = makeAttester('memory-recall-bench');
const noteVector = (speaker: string, text: string) => encoder.encode(`${speaker}: ${text}`);
const scopeOf = (conversation: string): P.Scope => ({ agent_id: `memory-recall-${conversation}` });

async function openStore(store: StoreName) {
  // No note quota (one key writes everything), no response-schema checks (production default).
  return build({ attesterKeys: [agent.publicKey], checkResponses: false }, { SVC_NOTE_DAILY_QUOTA: '0' }, { driver: store });
}

interface Mode {
  name: string;
  body(q: Question, qv: number[]): Record<string, unknown>;
}

const MODES: Mode[] = [
  { name: 'text', body: (q) => ({ query: q.question, limit: LIMIT }) },
  { name: 'hybrid', body: (q, qv) => ({ query: q.question, vector: qv, limit: LIMIT }) },
  { name: 'vector', body: (_q, qv) => ({ vector: qv, limit: LIMIT }) },
];
const SWEEP_MODES: Mode[] = sweep.map((w) => ({
  name: `hybrid_text_${w}`,
  body: (q, qv) => ({ query: q.question, vector: qv, limit: LIMIT, weights: { text: w, vector: Number((1 - w).toFixed(6)) } }),
}));

/** BM25 over each conversation's turns: text alone, and speaker name + text. */
function baselines(convs: Conversation[]): { bm25: RecallSummary; bm25_speaker: RecallSummary } {
  const plain: Ranked[] = [];
  const withSpeaker: Ranked[] = [];
  for (const c of convs) {
    const a = new Bm25Index();
    const b = new Bm25Index();
    for (const t of c.turns) {
      a.add(t.id, t.text);
      b.add(t.id, `${t.speaker} ${t.text}`);
    }
    for (const q of c.questions) {
      plain.push({ question: q, ranked: a.search(q.question, LIMIT).map((x) => x.id) });
      withSpeaker.push({ question: q, ranked: b.search(q.question, LIMIT).map((x) => x.id) });
    }
  }
  return { bm25: summarise(plain), bm25_speaker: summarise(withSpeaker) };
}

interface ModeRun {
  rows: Ranked[];
  errors: Record<string, number>;
  rankingSeen: Record<string, number>;
}

async function evaluateStore(store: StoreName, splits: Record<string, Conversation[]>, base: Record<string, { bm25: RecallSummary }>) {
  const started = performance.now();
  const t = await openStore(store);
  const client = new MemoryClient(t, agent);
  const latency: Record<string, number[]> = {};
  let engine: string | undefined;
  let truncated = 0;
  try {
    let notes = 0;
    let writeS = 0;
    for (const [split, convs] of Object.entries(splits)) {
      for (const c of convs) {
        const inputs: NoteInput[] = c.turns.map((turn) => ({ turn, vector: noteVector(turn.speaker, turn.text) }));
        writeS += await client.write(inputs, scopeOf(c.id));
        notes += inputs.length;
      }
      progress(`${store}: ${split} written (${notes} notes so far)`);
    }
    const out: Record<string, unknown> = { write: { notes, seconds: Number(writeS.toFixed(2)), notes_per_s: Math.round(notes / writeS) } };
    for (const [split, convs] of Object.entries(splits)) {
      const modes = split === 'dev' ? [...MODES, ...SWEEP_MODES] : MODES;
      const runs: Record<string, ModeRun> = Object.fromEntries(modes.map((m) => [m.name, { rows: [], errors: {}, rankingSeen: {} }]));
      for (const c of convs) {
        for (const q of c.questions) {
          const qv = encoder.encode(q.question);
          for (const m of modes) {
            const r: SearchOutcome = await client.search(m.body(q, qv), scopeOf(c.id));
            const run = runs[m.name];
            run.rows.push({ question: q, ranked: r.ranked });
            if (r.status !== 200) run.errors[`${r.status} ${r.code}`] = (run.errors[`${r.status} ${r.code}`] ?? 0) + 1;
            if (r.ranking) run.rankingSeen[r.ranking] = (run.rankingSeen[r.ranking] ?? 0) + 1;
            if (r.vectorScanTruncated) truncated++;
            engine ??= r.engine;
            const family = m.name.startsWith('hybrid') ? 'hybrid' : m.name;
            (latency[family] ??= []).push(r.ms);
          }
        }
        progress(`${store}: ${split} ${c.id} searched (${c.questions.length} questions × ${modes.length} modes)`);
      }
      const bm = base[split].bm25;
      out[split] = Object.fromEntries(
        Object.entries(runs).map(([name, run]) => {
          const s = summarise(run.rows);
          return [
            name,
            {
              ...s,
              recall_at_10_vs_bm25: ratio(s.recall_at_10, bm.recall_at_10),
              response_ranking: run.rankingSeen,
              ...(Object.keys(run.errors).length > 0 ? { errors: run.errors } : {}),
            },
          ];
        }),
      );
    }
    out.engine = engine ?? null;
    out.vector_scan_truncated_responses = truncated;
    out.latency = Object.fromEntries(Object.entries(latency).map(([k, v]) => [k, percentiles(v)]));
    out.wall_s = Number(((performance.now() - started) / 1000).toFixed(1));
    return out;
  } finally {
    await t.close();
  }
}

/** The recall@10 ratios of the service's modes to BM25 (text only) per split. */
function ratios(result: Record<string, any>, base: Record<string, { bm25: RecallSummary }>) {
  const out: Record<string, Record<string, number | null>> = {};
  for (const split of Object.keys(base)) {
    const b = base[split].bm25.recall_at_10;
    out[split] = {
      text_vs_bm25: ratio(result[split].text.recall_at_10, b),
      hybrid_vs_bm25: ratio(result[split].hybrid.recall_at_10, b),
      vector_vs_bm25: ratio(result[split].vector.recall_at_10, b),
    };
  }
  return out;
}

function splitInfo(spec: SplitSpec, convs: Conversation[]) {
  return {
    seed: spec.seed,
    lexicon: spec.lexicon,
    conversations: convs.length,
    sessions: convs.reduce((a, c) => a + c.sessions.length, 0),
    turns: convs.reduce((a, c) => a + c.turns.length, 0),
    questions: convs.reduce((a, c) => a + c.questions.length, 0),
    hash: corpusHash(convs).slice(0, 16),
  };
}

async function recallRun() {
  const started = performance.now();
  const splits = { dev: splitCorpus(DEV_SPLIT), held_out: splitCorpus(HELD_OUT_SPLIT) };
  progress(`corpus: dev ${splits.dev.length} + held-out ${splits.held_out.length} conversations`);
  const base = { dev: baselines(splits.dev), held_out: baselines(splits.held_out) };
  const results: Record<string, unknown> = {};
  const ratioOut: Record<string, unknown> = {};
  for (const store of stores) {
    progress(`${store}: start`);
    const r = await evaluateStore(store, splits, base);
    results[store] = r;
    ratioOut[store] = ratios(r, base);
  }
  return {
    bench: 'memory-recall',
    encoder: ENCODER_LABEL,
    encoder_note: `${ENCODER_DIM} dimensions; knows the generator's paraphrase groups (dev and held-out) except ${ENCODER_MISS_RATE * 100}% of surface forms; notes encoded as "<speaker>: <text>". Hybrid and vector figures are an upper-ish bound, not a real model.`,
    corpus: { dev: splitInfo(DEV_SPLIT, splits.dev), held_out: splitInfo(HELD_OUT_SPLIT, splits.held_out) },
    search: {
      limit: LIMIT,
      hybrid_default_weights: 'service default',
      sweep_text_weights_dev: sweep,
      latency_method: 'in-process fastify inject (no socket): routing, validation, ranking, fact reads, receipts, JSON',
    },
    hit_rule: 'recall@k: any evidence turn in the top k; multi_hop_all_at_10: every evidence turn in the top 10',
    baselines: { ...base, note: 'Okapi BM25 in process (k1 1.2, b 0.75, Porter stems, no stop words), one index per conversation; bm25 indexes the text, bm25_speaker the speaker name plus the text' },
    stores: results,
    ratios_recall_at_10: ratioOut,
    wall_s: Number(((performance.now() - started) / 1000).toFixed(1)),
  };
}

async function scaleRun(target: number, nQuestions: number) {
  const started = performance.now();
  // Fresh seeds: conversations the dev and held-out splits never contain.
  // A conversation holds at least 20 × 15 turns, so this many always reach the target.
  const convs = generateCorpus(0x5ca1e, { conversations: Math.ceil(target / 300), lexicon: 'dev', prefix: 'x' });
  const inputs: NoteInput[] = convs
    .flatMap((c) => c.turns)
    .slice(0, target)
    .map((turn) => ({ turn, vector: noteVector(turn.speaker, turn.text) }));
  const written = new Set(inputs.map((n) => n.turn.id));
  const pool = convs.flatMap((c) => c.questions).filter((q) => q.evidence.every((e) => written.has(e)));
  const rnd = seededRandom(0xa5a5);
  const questions: Question[] = [];
  const taken = new Set<number>();
  while (questions.length < Math.min(nQuestions, pool.length)) {
    const i = Math.floor(rnd() * pool.length);
    if (taken.has(i)) continue;
    taken.add(i);
    questions.push(pool[i]);
  }
  progress(`scale: ${inputs.length} notes from ${convs.length} conversations, ${questions.length} questions`);
  const scope: P.Scope = { agent_id: 'memory-recall-scale' };
  const results: Record<string, unknown> = {};
  for (const store of stores) {
    const storeStarted = performance.now();
    const t = await openStore(store);
    try {
      const client = new MemoryClient(t, agent);
      const writeS = await client.write(inputs, scope, (n) => {
        if (n % (NOTES_LOG * NOTES_PER_WRITE) === 0 || n === inputs.length) progress(`scale ${store}: ${n} notes written`);
      });
      if (store === 'postgres') {
        // What autovacuum does within a minute of a bulk load (docs/deploy.md keeps it on): the
        // planner's statistics, and the heap's visibility map. Measured steady state, not the
        // first minute after a 100 000-note import.
        const schema = t.service.config.databaseSchema;
        const { pgQuery } = await import('../test/store/support/pg-env.js');
        await pgQuery(`VACUUM ANALYZE "${schema}".mem_notes`);
        await pgQuery(`ANALYZE "${schema}".mem_note_df`);
      }
      const lat: Record<string, number[]> = { text: [], text_page: [], hybrid: [] };
      const rows: Record<string, Ranked[]> = { text: [], text_page: [], hybrid: [] };
      const errors: Record<string, number> = {};
      let truncated = 0;
      for (const q of questions) {
        const qv = encoder.encode(q.question);
        for (const [name, body] of [
          ['text', { query: q.question, limit: LIMIT }],
          // The default page (limit 10): what an agent's plain search costs.
          ['text_page', { query: q.question }],
          ['hybrid', { query: q.question, vector: qv, limit: LIMIT }],
        ] as const) {
          const r = await client.search(body, scope);
          lat[name].push(r.ms);
          rows[name].push({ question: q, ranked: r.ranked });
          if (r.status !== 200) errors[`${name} ${r.status} ${r.code}`] = (errors[`${name} ${r.status} ${r.code}`] ?? 0) + 1;
          if (r.vectorScanTruncated) truncated++;
        }
      }
      results[store] = {
        notes: inputs.length,
        write: { seconds: Number(writeS.toFixed(1)), notes_per_s: Math.round(inputs.length / writeS) },
        text: { ...percentiles(lat.text), recall_at_10: summarise(rows.text).recall_at_10 },
        text_default_page: { ...percentiles(lat.text_page), limit: 10 },
        hybrid: { ...percentiles(lat.hybrid), recall_at_10: summarise(rows.hybrid).recall_at_10, vector_scan_truncated_responses: truncated },
        ...(Object.keys(errors).length > 0 ? { errors } : {}),
        wall_s: Number(((performance.now() - storeStarted) / 1000).toFixed(1)),
      };
      progress(`scale ${store}: done`);
    } finally {
      await t.close();
    }
  }
  return {
    bench: 'memory-recall-scale',
    encoder: ENCODER_LABEL,
    scope_notes: inputs.length,
    conversations: convs.length,
    questions: questions.length,
    search: { limit: LIMIT, latency_method: 'in-process fastify inject (no socket), one request at a time' },
    note: 'recall_at_10 here is over one scope holding every conversation (other conversations are distractors); latency is the point of this case',
    stores: results,
    wall_s: Number(((performance.now() - started) / 1000).toFixed(1)),
  };
}

const report = opt.scale ? await scaleRun(Number(opt.scale), Number(opt['scale-questions'])) : await recallRun();
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
