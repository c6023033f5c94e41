/**
 * Memory records (docs/writes.md, "Memory records"): the subject a record of a record band is
 * filed under, and the exact fact body a client signs for one. Records are ordinary primary
 * facts of static record bands (tslot 0) at an `svc:entity:` subject derived from their content,
 * so the same content always lands at the same subject and a reader can recompute it.
 * Pure and browser-safe, like everything in protocol/.
 */
import { anchorId } from './cid.js';
import { invalidArgument } from './errors.js';
import type { Scope } from './receipt.js';

/** Record bands whose bodies the write path validates field by field. */
export const MEMORY_RECORD_BANDS = ['memory.entity', 'memory.alias', 'memory.note', 'memory.edge', 'device.enrollment', 'device.revocation', 'device.trace', 'memory.bearer_revocation'] as const;
export type MemoryRecordBand = (typeof MEMORY_RECORD_BANDS)[number];

/** Record bands about a key: filed under the subject anchored on `{key}`, not on the whole value. */
export const KEY_ANCHORED_BANDS: ReadonlySet<string> = new Set(['device.enrollment', 'device.revocation', 'memory.bearer_revocation']);

export function isMemoryRecordBand(band: unknown): band is MemoryRecordBand {
  return typeof band === 'string' && (MEMORY_RECORD_BANDS as readonly string[]).includes(band);
}

/**
 * The `svc:entity:` subject a record of `band` with `value` is filed under:
 * `svc:entity:` + anchorId(value), or anchorId({key: value.key}) for the key-anchored bands.
 */
export function recordSubject(band: string, value: Record<string, unknown>): string {
  if (KEY_ANCHORED_BANDS.has(band)) {
    const key = (value as { key?: unknown } | null)?.key;
    if (typeof key !== 'string') throw invalidArgument('value.key', `${band} records are filed under the subject anchored on {key}: value.key must be a string`);
    return `svc:entity:${anchorId({ key })}`;
  }
  return `svc:entity:${anchorId(value)}`;
}

/**
 * The fact body a client signs for one record: kind primary, the subject of `recordSubject`,
 * the band, tslot 0, the value, signed_at and (when set) the scope. Add it to an attest batch
 * as is; its fact_cid is `factCid(body)`.
 */
export function recordBody(band: string, value: Record<string, unknown>, opts: { signed_at: string; scope?: Scope }): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: 'primary', cell: recordSubject(band, value), band, tslot: 0, value, signed_at: opts.signed_at };
  if (opts.scope) {
    const scope: Scope = {};
    for (const k of ['user_id', 'agent_id', 'run_id', 'org_id'] as const) if (typeof opts.scope[k] === 'string') scope[k] = opts.scope[k];
    if (Object.keys(scope).length > 0) body.scope = scope;
  }
  return body;
}
