/**
 * Argument rules of the content-addressed document store (contract.ts, DocumentStore), shared by
 * both drivers so they refuse exactly the same calls.
 */

/** Largest document in UTF-8 bytes (a bundle definition of 256 fact_cids and a label is about 15 KiB). */
export const MAX_DOCUMENT_BYTES = 256 * 1024;

const KIND_RE = /^[a-z][a-z0-9_.-]{0,31}$/;
const CID_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Throws unless (kind, cid) names a document. */
export function checkDocumentKey(kind: string, cid: string): void {
  if (typeof kind !== 'string' || !KIND_RE.test(kind)) throw new TypeError('kind: expected a lowercase name of 1..32 characters ([a-z][a-z0-9_.-]*)');
  if (typeof cid !== 'string' || !CID_RE.test(cid)) throw new TypeError('cid: expected 1..128 characters of [A-Za-z0-9_.:-]');
}

/** Throws unless `text` may be stored. */
export function checkDocumentText(text: string): void {
  if (typeof text !== 'string') throw new TypeError('text: expected a string');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES) throw new RangeError(`text: ${bytes} bytes, at most ${MAX_DOCUMENT_BYTES}`);
}
