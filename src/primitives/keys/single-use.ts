/**
 * Single-use signed statements (docs/security.md, "Signed statements"). Every statement a key
 * signs for this responder (a bearer request, a device enrollment, a key revocation, a bearer
 * revocation, a backfill request) carries an expiry; the responder records the statement's
 * digest in the store's transient table until then, after its signature verified and before it
 * acts, so the same bytes presented again (here, at another responder sharing the store, or
 * after a restart) are refused. Past its expiry a statement is refused as expired anyway, so
 * the table holds at most one expiry window of statements.
 */
import { toHex } from '../../protocol/bytes.js';
import { SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';

/** The statement kinds and the namespace each one's used digests live in. */
export type StatementKind = 'scope_bearer_request' | 'device_enrollment' | 'key_revocation' | 'bearer_revocation' | 'backfill';

/**
 * Use the statement with `digest` once: resolves the first time, throws 401 `unauthorized`
 * (reason `replayed`) every later time until `expUnix` has passed. Call only after the
 * signature verified, so nobody can use up another key's statements.
 */
export async function useStatementOnce(ctx: ServiceContext, kind: StatementKind, digest: Uint8Array | string, expUnix: number, field = 'signature'): Promise<void> {
  const id = typeof digest === 'string' ? digest : toHex(digest);
  // Kept one second past exp: a statement is still good during the second it expires in.
  if (await ctx.store.transients.claimOnce(`statement:${kind}`, id, (expUnix + 1) * 1000)) return;
  throw new SvcError('unauthorized', `${field}: this signed ${kind} statement was already used; every signed statement is good once (sign a fresh one)`, {
    field,
    reason: 'replayed',
    statement: kind,
  });
}
