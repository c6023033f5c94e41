/**
 * Plain Okapi BM25, in process: the baseline the service's text search is compared with.
 * Words are runs of Unicode letters and digits, lower-cased, Porter-stemmed (npm `stemmer`), no
 * stop words removed. k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5)). A query
 * word that occurs twice counts twice. One index per conversation.
 */
import { stemmer } from 'stemmer';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export function bm25Terms(text: string): string[] {
  return ((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) as string[]).map((w) => stemmer(w));
}

export class Bm25Index {
  private readonly ids: string[] = [];
  private readonly lengths: number[] = [];
  private readonly postings = new Map<string, Array<[doc: number, tf: number]>>();
  private totalLength = 0;

  add(id: string, text: string): void {
    const doc = this.ids.length;
    const terms = bm25Terms(text);
    this.ids.push(id);
    this.lengths.push(terms.length);
    this.totalLength += terms.length;
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      const list = this.postings.get(t) ?? [];
      list.push([doc, n]);
      this.postings.set(t, list);
    }
  }

  get size(): number {
    return this.ids.length;
  }

  idf(term: string): number {
    const df = this.postings.get(term)?.length ?? 0;
    return Math.log(1 + (this.ids.length - df + 0.5) / (df + 0.5));
  }

  /** The best `k` ids for `query`, best first (ties by insertion order). Documents with no query word are not returned. */
  search(query: string, k: number): Array<{ id: string; score: number }> {
    const n = this.ids.length;
    if (n === 0) return [];
    const avg = this.totalLength / n;
    const scores = new Map<number, number>();
    for (const term of bm25Terms(query)) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = this.idf(term);
      for (const [doc, tf] of list) {
        const s = (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * this.lengths[doc]) / avg));
        scores.set(doc, (scores.get(doc) ?? 0) + s);
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, k)
      .map(([doc, score]) => ({ id: this.ids[doc], score }));
  }
}
