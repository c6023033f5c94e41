/**
 * A text search over a store's memory index as the service ranks it (primitives/memory/
 * note-text.ts, without feedback or time), for store-level tests: the store finds candidates
 * and statistics, the shared ranking orders them.
 */
import { analyseQuery } from '../../../src/primitives/memory/note-query.js';
import { rankText } from '../../../src/primitives/memory/note-text.js';
import type { NoteHit, NoteSearch } from '../../../src/store/memory.js';
import type { Store } from '../../../src/store/contract.js';

export type TextHit = NoteHit & { text_score: number };

/** Notes matching `text` best first (text_score: the raw BM25F score), or newest first without words. */
export async function searchText(store: Pick<Store, 'memory'>, q: Omit<NoteSearch, 'terms'> & { text?: string }): Promise<TextHit[]> {
  const { text, limit, ...base } = q;
  const terms = analyseQuery(text ?? '', new Date(), false).terms.map((t) => t.term);
  if (terms.length === 0) return (await store.memory.searchNotes({ ...base, limit })).map((h) => ({ ...h, text_score: 0 }));
  const ranked = await rankText(store.memory, base, terms, { feedback: false, need: limit, yieldTurn: async () => {} });
  const best = ranked.hits.filter((h) => h.score > 0).slice(0, limit);
  const hits = await store.memory.notesAt({ scope: base.scope, seqs: best.map((h) => h.seq) });
  return hits.map((h, i) => ({ ...h, text_score: best[i].score }));
}
