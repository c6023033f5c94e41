/**
 * Which keys a scope is bound to (docs/scopes.md), in order of precedence:
 * 1. operator configuration (SVC_SCOPE_KEYS): when any set member of the scope's four-tuple is
 *    configured, the scope is bound to the keys listed for every configured member (so a tenant
 *    configured by org_id cannot be entered by listing a user_id of one's own);
 * 2. first claim otherwise: the first key other than the responder's to write into the scope,
 *    or to ask for a read bearer for it, owns it; the store records that claim atomically.
 * The responder key writes into any scope (it materializes only for a reader whose bearer was
 * checked) and never claims one. A bound key writes the scope and may obtain bearers to read it.
 */
import { BoundedCache } from '../../lib/cache.js';
import { SvcError } from '../../protocol/errors.js';
import { scopeFieldsSet, type Scope } from '../../protocol/receipt.js';
import { scopeKey } from '../../store/entry.js';
import type { ServiceContext } from '../context/context.js';

const MEMBERS = ['user_id', 'agent_id', 'run_id', 'org_id'] as const;

/** The keys configured for `scope` (intersection over its configured members), or undefined when none is configured. */
export function configuredKeys(ctx: ServiceContext, scope: Scope): ReadonlySet<string> | undefined {
  let keys: Set<string> | undefined;
  const set = scopeFieldsSet(scope) ?? {};
  for (const m of MEMBERS) {
    const v = set[m];
    const listed = v === undefined ? undefined : ctx.config.scopeKeys[`${m}:${v}`];
    if (listed === undefined) continue;
    keys = keys === undefined ? new Set(listed) : new Set(listed.filter((k) => keys!.has(k)));
  }
  return keys;
}

// Owners per service: a recorded claim never changes, so a known owner is cached for good.
const owners = new WeakMap<ServiceContext, BoundedCache<string, string>>();
const OWNERS_CAP = 10_000;

/**
 * The owner of an unconfigured scope; `claimant` (when given) becomes it if it has none. Null:
 * unowned (when only looking) or unclaimable (see Store.claimScope).
 */
export async function scopeOwner(ctx: ServiceContext, scope: Scope, claimant: string | null): Promise<string | null> {
  const key = scopeKey(scope);
  let cache = owners.get(ctx);
  if (!cache) owners.set(ctx, (cache = new BoundedCache<string, string>('scope_owners', { max: OWNERS_CAP })));
  const known = cache.get(key);
  if (known !== undefined) return known;
  const owner = await ctx.store.claimScope(scope, claimant, ctx.keys.publicKeyB32);
  if (owner !== null) {
    cache.set(key, owner);
  }
  return owner;
}

/**
 * True when `key` is bound to `scope`; with `claim`, an unowned, unconfigured scope is claimed
 * for `key` first. The answer never depends on what the scope holds.
 */
export async function isBound(ctx: ServiceContext, key: string, scope: Scope, claim: boolean): Promise<boolean> {
  const configured = configuredKeys(ctx, scope);
  if (configured) return configured.has(key);
  if (key === ctx.keys.publicKeyB32) return false; // the responder never owns a scope
  return (await scopeOwner(ctx, scope, claim ? key : null)) === key;
}

/** The refusal for a key that is not bound to the scope (never naming who is). */
export function notBound(field: string, key: string): SvcError {
  return new SvcError(
    'unauthorized',
    `${field}: key ${key} is not bound to this scope (SVC_SCOPE_KEYS, or the key that claimed it first; docs/scopes.md)`,
    {
      field,
      reason: 'scope_not_bound',
    },
    { status: 403 },
  );
}
