/**
 * What every primitive receives: configuration, registry, manifests, the responder key and the
 * store. Primitives are plain async functions over this context; REST and MCP both call them.
 */
import type { Config } from '../../config.js';
import type { ResponderKeys } from '../../keys.js';
import type { Ed25519Backend } from '../../protocol/ed25519.js';
import { isoSeconds, signReceipt, type Cost, type Manifests, type Receipt, type ReceiptBody } from '../../protocol/receipt.js';
import { ulid } from '../../protocol/ulid.js';
import { ReceiptTemplate, type FixedReceiptBody } from '../../protocol/receipt-template.js';
import type { ManifestSet } from '../../registry/manifests.js';
import type { PublishedManifests } from '../../registry/published.js';
import type { Registry } from '../../registry/registry.js';
import type { CachedStore } from '../../store/index.js';
import type { MaterializerRegistry } from '../../sources/contract.js';
import type { MaterializationRunner } from './materialize-note.js';
import type { Metrics } from '../../lib/metrics.js';

export interface ServiceContext {
  readonly config: Config;
  readonly registry: Registry;
  readonly manifests: ManifestSet;
  /** Every registry and schema CID this responder has served under (verify_receipt's advisory). */
  readonly publishedManifests?: PublishedManifests;
  readonly keys: ResponderKeys;
  readonly store: CachedStore;
  /** Fast Ed25519 for verification on the server (behind protocol verifyStrict). */
  readonly ed25519: Ed25519Backend;
  readonly now: () => Date;
  readonly materializers: MaterializerRegistry;
  readonly materializations: MaterializationRunner<ServiceContext>;
  readonly metrics: Metrics;
  /**
   * Where batch attestations are accepted when not here: a worker process hands them to the
   * process that owns the store, which checks and appends them in full (write/forwarded.ts).
   */
  readonly owner?: { attest(req: unknown): Promise<unknown> };
  /** Place-name resolution (the locate primitive) when wired; recall accepts names through it. */
  locate?: (place: string) => Promise<{ cell64: string; label?: string; is_high_confidence?: boolean }>;
}

/** Per-request facts a receipt needs beyond the signed lists. */
export interface ReceiptExtras extends Partial<Omit<ReceiptBody, 'primitive' | 'cells' | 'fact_cids'>> {
  cost?: Cost;
  intent?: string;
}

/** The fields of a receipt that do not change between responses to the same answer. */
function fixedReceiptBody(ctx: ServiceContext, primitive: string, cells: string[], factCids: string[], extras: ReceiptExtras): FixedReceiptBody {
  return {
    primitive: `${ctx.config.prefix}.${primitive}`,
    cells,
    fact_cids: factCids,
    scope: extras.scope,
    as_of: extras.as_of,
    edge_cids: extras.edge_cids,
    source_versions: extras.source_versions,
    field: extras.field,
    merkle_proof: extras.merkle_proof,
    intent: extras.intent,
  };
}

function manifestsOf(ctx: ServiceContext): Manifests {
  return { schema_cid: ctx.manifests.schema_cid, registry_cid: ctx.manifests.registry_cid };
}

/** Sign a receipt for `primitive` (namespaced with the deployment prefix) over cells and fact_cids. */
export function issueReceipt(ctx: ServiceContext, primitive: string, cells: string[], factCids: string[], extras: ReceiptExtras = {}): Receipt {
  const body: ReceiptBody & { cost?: Cost; intent?: string } = {
    request_id: extras.request_id ?? ulid(),
    served_at: extras.served_at ?? isoSeconds(ctx.now()),
    ...fixedReceiptBody(ctx, primitive, cells, factCids, extras),
    cost: extras.cost,
  };
  return signReceipt(body, ctx.keys.signer, manifestsOf(ctx), ctx.config.prefix);
}

/**
 * A template for re-issuing receipts over one answer that does not change (a warm repeat):
 * `issueFromTemplate` then signs the same receipt `issueReceipt` would, with less work.
 */
export function receiptTemplate(ctx: ServiceContext, primitive: string, cells: string[], factCids: string[], extras: Omit<ReceiptExtras, 'request_id' | 'served_at' | 'cost'> = {}): ReceiptTemplate {
  return new ReceiptTemplate(fixedReceiptBody(ctx, primitive, cells, factCids, extras), ctx.keys.signer, manifestsOf(ctx), ctx.config.prefix);
}

/** Sign one response's receipt through `template` (fresh request_id and served_at). */
export function issueFromTemplate(ctx: ServiceContext, template: ReceiptTemplate, cost?: Cost): Receipt {
  return template.issue(ulid(), isoSeconds(ctx.now()), cost);
}
