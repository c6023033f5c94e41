/** The `scope` field of a request, read the one way every operation reads it. */
import { invalidArgument } from '../../protocol/errors.js';
import type { Scope } from '../../protocol/receipt.js';

/** Scope members of a request (undefined when none is set); validates the shape. */
export function requestScope(v: unknown): Scope | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidArgument('scope', 'expected {user_id?, agent_id?, run_id?, org_id?}');
  const out: Scope = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (!['user_id', 'agent_id', 'run_id', 'org_id'].includes(k)) throw invalidArgument(`scope.${k}`, 'is not a known field');
    if (typeof x !== 'string') throw invalidArgument(`scope.${k}`, 'expected a string');
    out[k as keyof Scope] = x;
  }
  // Same rule as recall: a scope with no member set is no scope.
  return Object.keys(out).length > 0 ? out : undefined;
}
