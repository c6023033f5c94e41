/**
 * @svc/client: a TypeScript client for svc. Typed calls of every operation, every answer
 * verified offline against the responder key, retries honouring retry_after, ETag reuse for
 * recall, and helpers for signed writes (attest, memory records) and scope bearers.
 */
export { SvcClient, RECORD_ROUTES, seedOf, publicKeyOf, queryString, type AttestAnswer, type RecordBand, type NoteValue, type EdgeValue, type AliasValue } from './client.js';
export { SvcApiError, SvcNetworkError, VerificationError } from './errors.js';
export * from './operations.gen.js';
export type * from './types.js';
/** The protocol module (verifyResponse, factCid, cellOf, batchRoot, …), for work beyond the client. */
export * as protocol from './protocol.js';
