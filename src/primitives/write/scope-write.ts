/**
 * Scope rules of the write path (attest.ts, docs/scopes.md):
 * - a batch writes one scope, or none: its log entry is then either public (bodies served to
 *   anyone) or private to that one scope (leaf hash only, bodies to that scope's bearers), and
 *   public facts never sit in an entry that has to be withheld;
 * - a scope is written only by a key bound to it (binding.ts); the first write of an
 *   unconfigured scope claims it for its key.
 */
import { SvcError } from '../../protocol/errors.js';
import type { Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../../store/entry.js';
import type { ServiceContext } from '../context/context.js';
import type { AttesterKind } from './fact-rules.js';
import { isBound, notBound } from './scope-binding.js';

/** The one scope every fact of a batch shares (null: public); refuses a batch that mixes them. */
export function batchScope(scopes: readonly (Scope | null)[]): Scope | null {
  const first = scopeKey(scopes[0]);
  const i = scopes.findIndex((s) => scopeKey(s) !== first);
  if (i < 0) return scopes[0] ?? null;
  throw new SvcError('invalid_argument', `facts[${i}].scope: differs from facts[0].scope; a batch writes one scope or none (send them as separate batches)`, {
    field: `facts[${i}].scope`,
  });
}

/**
 * Throws unless `attester` may write into `scope` (claiming it when it is unconfigured and
 * unowned). Called once the batch is authenticated, so only a key that signed it can claim.
 */
export async function checkScopeWrite(ctx: ServiceContext, attester: string, writer: AttesterKind, scope: Scope): Promise<void> {
  // The responder materializes into a scope only for a reader whose bearer was checked.
  if (writer === 'responder') return;
  if (!(await isBound(ctx, attester, scope, true))) throw notBound('facts[0].scope', attester);
}
