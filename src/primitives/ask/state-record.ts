/**
 * The `svc:state:` token of an answer step (docs/ask.md, "The `svc:state:` token").
 * The record pins what the step was: the question, its routing, the place, the signed cells and
 * fact_cids (exactly the receipt's lists, in its order), the answer text, and the receipt that
 * signed them (request_id, served_at, signature). Its content id is the BLAKE3 of its canonical
 * CBOR, like every record id here, so anyone holding the record recomputes the cid.
 *
 * By default the record is kept outside the log for a retention window, its token naming the
 * record cid; on request it is kept durably as a responder-signed fact, its token naming that
 * fact's fact_cid (state-store.ts). Either resolves at GET /v1/state/<id>. When it could not be
 * kept (a full disk, a stalled writer) the answer says `persisted: false`.
 */
import { contentId } from '../../protocol/cid.js';
import type { Receipt } from '../../protocol/receipt.js';
import type { ServiceContext } from '../context/context.js';
import type { RouteResult } from './router.js';
import type { TimeWindow } from './time.js';

export interface AskStateRecord {
  /** `<prefix>.state.v1`. */
  schema: string;
  step: 'ask';
  question: string;
  routing: {
    intent: RouteResult['intent'];
    matched_topic: string | null;
    matched_topics: string[];
    out_of_scope: boolean;
    hunt_event: string | null;
    time: { expression: string; start_unix: number; end_unix: number } | null;
  };
  place: { cell64: string; label: string; via: string; lat: number; lng: number; is_high_confidence: boolean } | null;
  /** The receipt's `cells`, in its order. */
  cells: string[];
  /** The receipt's `fact_cids`, in its order. */
  fact_cids: string[];
  answer: string;
  /** The signed receipt of this step: enough to fetch and check it against the responder key. */
  receipt: { request_id: string; served_at: string; primitive: string; signature: string };
  responder: string;
  registry_cid: string;
  schema_cid: string;
}

export interface AskState {
  /** `<prefix>:state:<fact_cid>` once kept (else `<prefix>:state:<record_cid>`, not resolvable). */
  token: string;
  /** The kept fact's fact_cid (GET /v1/state/<cid>); the record cid until it is kept. */
  cid: string;
  /** Content id of `record` itself (BLAKE3 of its canonical CBOR). */
  record_cid: string;
  record: AskStateRecord;
  /** Whether GET /v1/state/<cid> can serve the record on this responder. */
  persisted: boolean;
  /** Where it is kept (state-store.ts); null when it could not be kept. */
  kept: 'transient' | 'public' | 'scope' | null;
  /** For a transient step: when it stops resolving (ISO seconds); null for a durable one. */
  kept_until: string | null;
}

export interface StateParts {
  question: string;
  routing: RouteResult;
  time?: TimeWindow;
  place: AskStateRecord['place'];
  answer: string;
  receipt: Receipt;
}

/** The state record of one answer step, its content id and its token. */
export function stateRecord(ctx: ServiceContext, p: StateParts): AskState {
  const record: AskStateRecord = {
    schema: `${ctx.config.prefix}.state.v1`,
    step: 'ask',
    question: p.question,
    routing: {
      intent: p.routing.intent,
      matched_topic: p.routing.topic,
      matched_topics: p.routing.matched_topics,
      out_of_scope: p.routing.out_of_scope,
      hunt_event: p.routing.hunt?.event ?? null,
      time: p.time ? { expression: p.time.expression, start_unix: p.time.start_unix, end_unix: p.time.end_unix } : null,
    },
    place: p.place,
    cells: [...p.receipt.cells],
    fact_cids: [...p.receipt.fact_cids],
    answer: p.answer,
    receipt: { request_id: p.receipt.request_id, served_at: p.receipt.served_at, primitive: p.receipt.primitive, signature: p.receipt.signature },
    responder: ctx.keys.publicKeyB32,
    registry_cid: ctx.manifests.registry_cid,
    schema_cid: ctx.manifests.schema_cid,
  };
  const cid = contentId(record);
  return { token: `${ctx.config.prefix}:state:${cid}`, cid, record_cid: cid, record, persisted: false, kept: null, kept_until: null };
}
