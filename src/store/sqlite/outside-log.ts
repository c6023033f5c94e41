/**
 * Writes the embedded driver keeps beside the log rather than in it: witness co-signatures and
 * first claims on scopes. None may wait in the index's deferred transaction for a crash to lose,
 * so each first commits the pending applies and then commits on its own. A full disk refuses the
 * write with storage_full and keeps nothing (the caller may submit again).
 */
import { scopeKey } from '../entry.js';
import { isDiskFull, storageFull } from '../disk-full.js';
import type { Scope } from '../../protocol/receipt.js';
import { internal, type Queries } from './queries.js';

/** Commit what the index holds (a failure is the store's to handle), then run `write` alone. */
export function writeAlone(commitPending: () => void, write: () => void, what: string): void {
  commitPending();
  try {
    write();
  } catch (err) {
    if (isDiskFull(err)) throw storageFull('index', err);
    throw internal(what, err);
  }
}

/**
 * The owner of `scope`: its recorded claim, else its first writer other than `exclude`, else
 * `claimant` (recorded as the claim; null only looks). Synchronous from the lookup on, so no
 * other claim runs in between.
 */
export function claimScopeOwner(q: Queries, scope: Scope, claimant: string | null, exclude: string, at: string, commitPending: () => void): string | null {
  const key = scopeKey(scope);
  if (key === '') throw new TypeError('scope: expected at least one member set');
  const recorded = q.claimOf.get(key);
  if (recorded !== undefined) return recorded;
  const derived = q.derivedOwner(key, exclude);
  const owner = derived === undefined ? claimant : derived;
  if (owner === null) return null;
  writeAlone(commitPending, () => q.insertClaim.run(key, owner, at), 'claimScope');
  return q.claimOf.get(key) ?? null;
}
