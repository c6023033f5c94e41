/**
 * backfill (docs/writes.md, "Backfill"): fill the past of one band at a cell (or up to 64 cells)
 * from the band's connector, newest tslot first, through the same write path as every other fact. A
 * write: the caller signs the request with an attester key the responder accepts.
 *
 * Per tslot of the band's tempo in the window (capped by max_facts):
 * - a fact already stored (unscoped)            → `present`;
 * - the current slot                            → ordinary materialization (shared with recall);
 * - a past slot, connector with history         → fetched (one ranged request when the connector
 *   offers `fetchRange`) and minted → `materialized`, or `skipped` with a reason class;
 * - a past slot, no historical source           → `present_only`.
 *
 * What the attester signs binds the request to one responder and one use (issue 13, item 13):
 * `responder` (this responder's public key), `nonce` (used once) and `expires_unix` (at most
 * SVC_BACKFILL_MAX_TTL_SECS ahead; the nonce is kept until then). The old form without them
 * is refused: nothing could stop it from running again here or on any responder listing its key.
 */
import { b32decode } from '../../protocol/base32.js';
import { toHex, utf8 } from '../../protocol/bytes.js';
import { encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { admitPublicKey, verifyStrict } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { blake3 } from '../../protocol/hash.js';
import { currentTslot, tslotOf, tslotRange } from '../../protocol/tslot.js';
import type { Receipt } from '../../protocol/receipt.js';
import type { BandEntry } from '../../registry/registry.js';
import type { MaterializeOutcome } from '../../sources/contract.js';
import { hasFetchRange } from '../../sources/json-helpers.js';
import { mintedBody, mintFacts, mintRefusal } from '../write/attest.js';
import { keyStanding } from '../write/standing.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { MaterializeNote, ReasonClass } from '../context/materialize-note.js';
import { resolveCell } from '../reads/recall.js';
import { mapLimit } from '../reads/common.js';
import { useStatementOnce } from '../keys/single-use.js';

/** docs/security.md, "Fixed bounds per request". */
export const BACKFILL_LIMITS = { max_facts: { min: 1, max: 1024, default: 16 }, cells: 64 } as const;
/** Cells worked on at once in the area form. */
const AREA_CONCURRENCY = 4;
/** Past slots fetched at once when a connector has history but no ranged fetch. */
const SLOT_CONCURRENCY = 4;
const DAY_S = 86_400;

/**
 * A backfill, as the operation's schema admits it (types and bounds checked; no defaults filled
 * in: the body is signed as sent). Cross-field rules, the config-bound ones and the binding's
 * values are checked here.
 */
export interface BackfillRequest {
  cell?: string;
  cells?: string[];
  band: string;
  start_unix?: number;
  end_unix?: number;
  max_facts?: number;
  budget_ms?: number;
  /** The binding (see the file comment): target responder key, single-use nonce, expiry. */
  responder?: string;
  nonce?: string;
  expires_unix?: number;
  attester?: string;
  signature?: string;
}

/** The fields that bind a signed request to one responder and one use. */
export const BACKFILL_BINDING = ['responder', 'nonce', 'expires_unix'] as const;

export type StepStatus = 'present' | 'materialized' | 'skipped' | 'present_only';

/** One tslot of the walk. */
export interface BackfillStep {
  tslot: number;
  fact_cid: string | null;
  status: StepStatus;
  /** `skipped` only. */
  reason_class?: ReasonClass;
  reason?: string;
  /** `materialized` only: true when the minted fact is a signed absence. */
  absence?: boolean;
}

export type StepCounts = Record<StepStatus, number>;

export interface Progress {
  done: number;
  total: number;
  complete: boolean;
}

export interface BackfillWindow {
  start_unix: number;
  end_unix: number;
  tslot_from: number;
  tslot_to: number;
}

/** The walk over one cell. */
export interface CellBackfill {
  steps: BackfillStep[];
  counts: StepCounts;
  progress: Progress;
  /** When the window was longer than max_facts: pass as end_unix to continue with older slots. */
  next_end_unix?: number;
}

export interface BackfillResult extends CellBackfill {
  cell: string;
  band: string;
  window: BackfillWindow;
  receipt: Receipt;
}

export interface AreaBackfillResult {
  cells: string[];
  band: string;
  window: BackfillWindow;
  by_cell: Record<string, CellBackfill>;
  /** Cells not started before budget_ms ran out. */
  pending: string[];
  counts: StepCounts;
  progress: Progress;
  receipt: Receipt;
}

/** The digest a caller signs: blake3 of the canonical CBOR of the request body without `signature`. */
export function backfillDigest(body: Record<string, unknown>): Uint8Array {
  const { signature: _s, ...unsigned } = body;
  try {
    return blake3(encodeCanonical(unsigned as CborValue));
  } catch (e) {
    throw invalidArgument('body', `cannot be encoded canonically (${(e as Error).message})`);
  }
}

/** An `unauthorized` refusal of a signed request that may not run here or now. */
function refused(reason: string, message: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('unauthorized', message, { reason, ...details });
}

/**
 * The binding must be present, name this responder and not have expired. Checked before the
 * signature (cheap, and none of it is secret); the nonce is claimed only after the signature
 * verifies, so nobody can use up another attester's nonces.
 */
function checkBinding(ctx: ServiceContext, body: BackfillRequest): number {
  const { responder, nonce, expires_unix: expires } = body;
  if (responder === undefined || nonce === undefined || expires === undefined) {
    throw refused(
      'unbound_signature',
      `signature: must cover ${BACKFILL_BINDING.join(', ')} (the responder's public key, a single-use nonce, an expiry): a signature without them could be replayed here and on other responders`,
      {
        field: BACKFILL_BINDING.find((f) => body[f] === undefined),
        required: [...BACKFILL_BINDING],
      },
    );
  }
  if (responder !== ctx.keys.publicKeyB32) {
    throw refused('wrong_responder', 'responder: the request was signed for another responder', { field: 'responder', expected: ctx.keys.publicKeyB32 });
  }
  // The nonce's form and the expiry's type are the operation schema's.
  const now = ctx.now().getTime();
  if (expires * 1000 <= now) throw refused('expired', `expires_unix: the request expired ${Math.ceil(now / 1000 - expires)} s ago`, { field: 'expires_unix' });
  const maxTtl = ctx.config.backfillMaxTtlSecs;
  if (expires * 1000 > now + maxTtl * 1000) throw invalidArgument('expires_unix', `at most ${maxTtl} s ahead (SVC_BACKFILL_MAX_TTL_SECS)`);
  return expires * 1000;
}

/** A key that may write (docs/writes.md, "Signatures") must have signed this exact request, for this responder, once. */
async function authenticate(ctx: ServiceContext, body: BackfillRequest): Promise<void> {
  const { attester, signature } = body;
  if (!attester) throw new SvcError('unauthorized', 'attester: missing attester key (backfill is a write)', { field: 'attester' });
  if (!signature) throw new SvcError('unauthorized', 'signature: missing attester signature over the request', { field: 'signature' });
  // Config and records alike: an enrolled device may ask, a key revoked by a record may not.
  await keyStanding(ctx, attester);
  let pub: Uint8Array;
  let sig: Uint8Array;
  try {
    pub = b32decode(attester, 32, 'attester');
    sig = b32decode(signature, 64, 'signature');
  } catch (e) {
    throw new SvcError('unauthorized', (e as Error).message, { field: (e as SvcError).details?.field ?? 'signature' });
  }
  const key = admitPublicKey(pub);
  if (!key.ok) throw new SvcError('bad_signature', `attester: key refused (${key.reason})`, { field: 'attester', reason: key.reason });
  const expiresAt = checkBinding(ctx, body);
  if (!verifyStrict(sig, backfillDigest({ ...body }), pub, ctx.ed25519)) {
    throw new SvcError('bad_signature', 'signature: bad signature over blake3(canonical CBOR of the request without signature)', { field: 'signature' });
  }
  // Used once, whatever happens next, at every responder sharing the store: a retry signs a new nonce.
  await useStatementOnce(ctx, 'backfill', toHex(blake3(utf8(`${attester}\u0000${body.nonce as string}`))), expiresAt / 1000, 'nonce');
}

/** The window and its tslots (newest first, capped by max_facts). */
function plan(ctx: ServiceContext, band: BandEntry, req: BackfillRequest): { window: BackfillWindow; tslots: number[]; total: number } {
  const nowS = Math.floor(ctx.now().getTime() / 1000);
  const endAsked = req.end_unix;
  if (endAsked !== undefined && endAsked > nowS + DAY_S) throw invalidArgument('end_unix', 'is in the future: the past can be backfilled, the future cannot');
  const end = Math.min(endAsked ?? nowS, nowS);
  const span = band.tempo === 'fast' ? 30 * DAY_S : 365 * DAY_S;
  const start = req.start_unix ?? Math.max(0, end - span);
  if (start > end) throw invalidArgument('start_unix', `must not be after end_unix (${start} > ${end})`);
  // Not a schema default: the validator would insert it into the signed body.
  const maxFacts = req.max_facts ?? BACKFILL_LIMITS.max_facts.default;
  if (band.tempo === 'static') return { window: { start_unix: start, end_unix: end, tslot_from: 0, tslot_to: 0 }, tslots: [0], total: 1 };
  // Nothing exists before the source's history begins or after it ends.
  const from = tslotOf(Math.max(start, band.history_from_unix ?? 0), band.tempo);
  const to = tslotOf(band.history_to_unix === null ? end : Math.min(end, band.history_to_unix), band.tempo);
  const total = Math.max(0, to - from + 1);
  const tslots: number[] = [];
  for (let t = to; t >= from && tslots.length < maxFacts; t--) tslots.push(t);
  return { window: { start_unix: start, end_unix: end, tslot_from: from, tslot_to: to }, tslots, total };
}

function stepOfNote(tslot: number, note: MaterializeNote): BackfillStep {
  if (note.status === 'materialized') return { tslot, fact_cid: note.fact_cid, status: 'materialized', ...(note.absence ? { absence: true } : {}) };
  return { tslot, fact_cid: null, status: 'skipped', reason_class: note.reason_class ?? 'upstream_error', reason: note.reason };
}

/** A fact body for an outcome, shaped exactly as lazy materialization shapes it. */
function bodyOf(ctx: ServiceContext, cell: string, band: BandEntry, tslot: number, o: Extract<MaterializeOutcome, { status: 'value' | 'absence' }>): Record<string, unknown> {
  const derivation: Record<string, unknown> = { fn: o.fn, sources: [o.provenance.ref ? `${o.provenance.source}:${o.provenance.ref}` : o.provenance.source] };
  if (o.provenance.captured_at) derivation.captured_at = o.provenance.captured_at;
  if (o.provenance.version) derivation.version = o.provenance.version;
  if (o.status === 'value' && o.args) derivation.args = o.args;
  return mintedBody(ctx, {
    kind: o.status === 'value' ? 'primary' : 'absence',
    cell,
    band: band.key,
    tslot: o.tslot ?? tslot,
    value: o.status === 'value' ? o.value : null,
    unit: (o.status === 'value' ? o.unit : undefined) ?? band.unit,
    provenance: o.provenance.source,
    derivation: derivation as { fn: string; sources: string[] },
    absence_reason: o.status === 'absence' ? o.reason : undefined,
  });
}

/** The walk over one cell, newest tslot first. */
async function backfillCell(ctx: ServiceContext, cell: string, band: BandEntry, tslots: number[], total: number, deadline: number): Promise<CellBackfill> {
  const steps = new Map<number, BackfillStep>();
  if (tslots.length > 0) {
    const lo = tslots[tslots.length - 1];
    const hi = tslots[0];
    const stored = await ctx.store.history({ cell, bands: [band.key], tslot_from: lo, tslot_to: hi, scope: null });
    for (const f of stored) steps.set(f.tslot, { tslot: f.tslot, fact_cid: f.fact_cid, status: 'present' }); // oldest first: the newest version wins
  }
  const missing = tslots.filter((t) => !steps.has(t));
  const present = currentTslot(band.tempo, ctx.now().getTime());
  const connector = ctx.materializers.forBand(band.key);
  // Upstream work stops at the materializer timeout or the caller's deadline, whichever is first.
  const upstreamDeadline = Math.min(deadline, Date.now() + ctx.config.materializerTimeoutSecs * 1000);

  const viaMaterialization = async (t: number) => {
    const r = await ctx.materializations.materialize(ctx, cell, band, t, undefined, upstreamDeadline);
    steps.set(t, stepOfNote(t, r.note));
  };
  const current = missing.filter((t) => t >= present);
  const past = missing.filter((t) => t < present);
  const work: Promise<unknown>[] = current.map(viaMaterialization);

  if (past.length > 0 && (!connector || !connector.history)) {
    for (const t of past) steps.set(t, { tslot: t, fact_cid: null, status: 'present_only' });
  } else if (past.length > 0 && hasFetchRange(connector)) {
    work.push(
      (async () => {
        const wanted = new Set(past);
        const ranged = await connector.fetchRange(cell, band, past[past.length - 1], past[0], { deadline: upstreamDeadline });
        const got = ranged.filter((s) => wanted.has(s.tslot));
        const minted: Array<{ tslot: number; absence: boolean; body: Record<string, unknown> }> = [];
        for (const { tslot, outcome } of got) {
          if (outcome.status === 'value' || outcome.status === 'absence') {
            const body = bodyOf(ctx, cell, band, tslot, outcome);
            // A value the registry refuses is skipped alone; the rest of the range is still minted.
            const refused = mintRefusal(ctx, body);
            if (refused)
              steps.set(tslot, { tslot, fact_cid: null, status: 'skipped', reason_class: 'upstream_error', reason: `the upstream value was refused by the band registry: ${refused.message}` });
            else minted.push({ tslot, absence: outcome.status === 'absence', body });
          } else {
            steps.set(tslot, { tslot, fact_cid: null, status: 'skipped', reason_class: outcome.status === 'timeout' ? 'timeout' : 'upstream_error', reason: outcome.reason });
          }
        }
        // One batch, one log entry, for the whole range.
        if (minted.length > 0) {
          const res = await mintFacts(
            ctx,
            minted.map((m) => m.body),
            'backfill',
          );
          minted.forEach((m, i) => steps.set(m.tslot, { tslot: m.tslot, fact_cid: res.fact_cids[i], status: 'materialized', ...(m.absence ? { absence: true } : {}) }));
        }
        for (const t of past) {
          if (!steps.has(t)) steps.set(t, { tslot: t, fact_cid: null, status: 'skipped', reason_class: 'upstream_error', reason: `${connector.key} returned no outcome for tslot ${t}` });
        }
      })(),
    );
  } else if (past.length > 0) {
    work.push(mapLimit(past, SLOT_CONCURRENCY, viaMaterialization));
  }
  await Promise.all(work);

  const ordered = tslots.map((t) => steps.get(t)!);
  const counts: StepCounts = { present: 0, materialized: 0, skipped: 0, present_only: 0 };
  for (const s of ordered) counts[s.status]++;
  const out: CellBackfill = { steps: ordered, counts, progress: { done: ordered.length, total, complete: ordered.length === total } };
  if (ordered.length < total && band.tempo !== 'static') out.next_end_unix = tslotRange(tslots[tslots.length - 1], band.tempo).start_unix - 1;
  return out;
}

const cidsOf = (steps: BackfillStep[]) => steps.map((s) => s.fact_cid).filter((c): c is string => c !== null);

/** POST /v1/backfill: authenticate, validate, walk one cell or an area within its budget. */
export async function backfill(ctx: ServiceContext, req: BackfillRequest, opts: { deadline: number }): Promise<BackfillResult | AreaBackfillResult> {
  await authenticate(ctx, req);
  const band = ctx.registry.bands.get(req.band);
  if (!band) throw new SvcError('band_not_in_registry', `band: ${req.band} is not in the active manifest; bands need their namespace prefix (see /v1/bands)`, { field: 'band', band: req.band });
  if (req.cell !== undefined && req.cells !== undefined) throw invalidArgument('cells', 'give either cell or cells, not both');
  if (req.cell === undefined && req.cells === undefined) throw invalidArgument('cell', 'is required (or cells, for the area form)');
  // The schema bounds budget_ms by 600 000; the gateway timeout in force may be shorter.
  const maxBudget = ctx.config.timeoutSecs * 1000;
  const budget = req.budget_ms;
  if (budget !== undefined && budget > maxBudget) throw invalidArgument('budget_ms', `expected an integer 1..${maxBudget}, got ${budget}`);
  const { window, tslots, total } = plan(ctx, band, req);
  // Leave a little of the gateway budget to sign and answer.
  const deadline = Math.min(opts.deadline - 250, budget === undefined ? Infinity : Date.now() + budget);

  if (req.cell !== undefined) {
    const { cell } = await resolveCell(ctx, req.cell, 'cell');
    const walk = await backfillCell(ctx, cell, band, tslots, total, deadline);
    const receipt = issueReceipt(ctx, 'backfill', [cell], [...new Set(cidsOf(walk.steps))]);
    return { cell, band: band.key, window, ...walk, receipt };
  }

  // 1..BACKFILL_LIMITS.cells cells: the operation's schema.
  const cells: string[] = [];
  for (const [i, c] of (req.cells ?? []).entries()) {
    const { cell } = await resolveCell(ctx, c, `cells[${i}]`);
    if (!cells.includes(cell)) cells.push(cell);
  }
  const byCell: Record<string, CellBackfill> = {};
  const queue = [...cells];
  const worker = async () => {
    // A cell starts only while the budget lasts; cells never started are reported as pending.
    while (queue.length > 0 && Date.now() < deadline) {
      const cell = queue.shift()!;
      byCell[cell] = await backfillCell(ctx, cell, band, tslots, total, deadline);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AREA_CONCURRENCY, cells.length) }, worker));
  const done = cells.filter((c) => byCell[c] !== undefined);
  const counts: StepCounts = { present: 0, materialized: 0, skipped: 0, present_only: 0 };
  for (const c of done) for (const k of Object.keys(counts) as StepStatus[]) counts[k] += byCell[c].counts[k];
  const cids = [...new Set(done.flatMap((c) => cidsOf(byCell[c].steps)))];
  return {
    cells: done,
    band: band.key,
    window,
    by_cell: Object.fromEntries(done.map((c) => [c, byCell[c]])),
    pending: queue,
    counts,
    progress: { done: done.length, total: cells.length, complete: queue.length === 0 && done.every((c) => byCell[c].progress.complete) },
    receipt: issueReceipt(ctx, 'backfill', done, cids),
  };
}
