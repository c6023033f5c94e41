/** Backfill (docs/writes.md, "Backfill"; a write: REST only) and the wiring catalogues (docs/reads.md, "Discovery and catalogues"). */
import { Type } from '@sinclair/typebox';
import { backfill, BACKFILL_LIMITS } from '../../primitives/backfill/backfill.js';
import { dataAvailability, materializersInfo } from '../../primitives/materialize/materializers-info.js';
import { requireBand } from '../../primitives/reads/common.js';
import { resolveCell } from '../../primitives/reads/recall.js';
import type { ServiceContext } from '../../primitives/context/context.js';
import { defineOperation, type Operation } from '../operations.js';
import { Cell, OneOf } from '../schemas/inputs.js';
import { Closed, Nullable, Signed } from '../schemas/responses.js';

// Loose on purpose: a key of another responder is refused 401 wrong_responder, a bad attester key 401, not the schema's 422.
const LooseKey = Type.String({ minLength: 1, maxLength: 120 });

// No schema `default` anywhere here: the validator would insert it into the body and break the
// caller's signature (the digest is over the body as sent).
export const backfillInput = Type.Object(
  {
    cell: Type.Optional(Cell),
    cells: Type.Optional(Type.Array(Cell, { minItems: 1, maxItems: BACKFILL_LIMITS.cells, description: 'area form: up to 64 cells' })),
    band: Type.String({ minLength: 1, maxLength: 100, description: 'namespaced band key (see /v1/bands)' }),
    start_unix: Type.Optional(Type.Integer({ minimum: 0, description: 'default: 30 days before end_unix for fast bands, 365 days for medium and slow' })),
    end_unix: Type.Optional(Type.Integer({ minimum: 0, description: 'default: now' })),
    max_facts: Type.Optional(Type.Integer({ minimum: BACKFILL_LIMITS.max_facts.min, maximum: BACKFILL_LIMITS.max_facts.max, description: `default ${BACKFILL_LIMITS.max_facts.default}` })),
    budget_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000, description: 'area form: stop starting cells after this many ms (the rest are listed in pending)' })),
    // Not required here: a body without them gets the typed refusal that says what to sign.
    responder: Type.Optional({ ...LooseKey, description: "the target responder's public key (base32, /.well-known/svc.json responder_pubkey_b32): the signature is valid on this responder only" }),
    nonce: Type.Optional(
      Type.String({ minLength: 16, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$', description: 'single use: a request whose nonce was seen is refused as replayed until its expiry' }),
    ),
    expires_unix: Type.Optional(Type.Integer({ minimum: 0, description: 'the request is refused after this time (seconds since the epoch); at most SVC_BACKFILL_MAX_TTL_SECS ahead' })),
    attester: Type.Optional({ ...LooseKey, description: 'attester public key (base32): the responder, an enrolled device or an operator-listed key' }),
    signature: Type.Optional({ ...LooseKey, maxLength: 200, description: 'ed25519 (base32) over blake3(canonical CBOR of this body without signature), responder, nonce and expires_unix included' }),
  },
  { additionalProperties: false },
);

const noInput = Type.Object({}, { additionalProperties: false });

const count = Type.Integer({ minimum: 0 });
const Step = Closed({
  tslot: Type.Integer(),
  fact_cid: Nullable(Type.String()),
  status: OneOf(['present', 'materialized', 'skipped', 'present_only'] as const),
  reason_class: Type.Optional(Type.String({ description: 'skipped only: timeout, upstream_error, …' })),
  reason: Type.Optional(Type.String({ description: 'skipped only' })),
  absence: Type.Optional(Type.Boolean({ description: 'materialized only: the minted fact is a signed absence' })),
});
const Counts = Closed({ present: count, materialized: count, skipped: count, present_only: count });
const Progress = Closed({ done: count, total: count, complete: Type.Boolean() });
const Window = Closed({ start_unix: Type.Integer(), end_unix: Type.Integer(), tslot_from: Type.Integer(), tslot_to: Type.Integer() });
/** The walk over one cell. */
const cellWalk = {
  steps: Type.Array(Step, { description: 'one per tslot, newest first' }),
  counts: Counts,
  progress: Progress,
  next_end_unix: Type.Optional(Type.Integer({ description: 'the window held more than max_facts slots: pass as end_unix to continue with older ones' })),
};

export const backfillOp = defineOperation({
  name: 'backfill',
  method: 'POST',
  path: '/v1/backfill',
  summary: 'Fill the past of a band at a cell (or area) from its historical source',
  description:
    'Signed list of (tslot, fact_cid, status) per step, newest first: present, materialized, skipped, present_only. Needs an attester signature (spec part 5) over a body that names this responder, a single-use nonce and an expiry.',
  tags: ['write'],
  input: backfillInput,
  output: Type.Union([
    Signed({ cell: Type.String(), band: Type.String(), window: Window, ...cellWalk }, 'one cell'),
    Signed(
      {
        cells: Type.Array(Type.String(), { description: 'the cells walked' }),
        band: Type.String(),
        window: Window,
        by_cell: Type.Record(Type.String(), Closed(cellWalk), { description: 'the walk of each cell walked' }),
        pending: Type.Array(Type.String(), { description: 'cells not started before budget_ms ran out' }),
        counts: Counts,
        progress: Progress,
      },
      'the area form (cells)',
    ),
  ]),
  mcp: false,
  run: (ctx, input, call) => backfill(ctx, input, { deadline: call.deadline }),
});

export const materializersOp = defineOperation({
  name: 'materializers',
  method: 'GET',
  path: '/v1/materializers',
  summary: 'Wired upstream connectors and which bands they serve',
  tags: ['catalogue'],
  input: noInput,
  output: Closed({
    schema: Type.String(),
    materializer_timeout_s: Type.Number(),
    materializers: Type.Array(
      Closed({
        key: Type.String(),
        bands: Type.Array(Type.String()),
        serves: Type.Array(Type.String(), { description: 'bands this connector is the first choice for' }),
        history: Type.Boolean({ description: 'it can fetch past tslots' }),
        base_url_host: Nullable(Type.String()),
        timeout_s: Type.Number(),
      }),
    ),
    bands: Type.Array(Closed({ band: Type.String(), source: Type.String(), wired: Type.Boolean(), materializer: Nullable(Type.String()), history: Type.Boolean() })),
    counts: Closed({ bands: count, wired: count, with_history: count }),
  }),
  mcp: 'full',
  run: async (ctx) => materializersInfo(ctx),
});

const unix = Nullable(Type.Integer({ description: 'Unix seconds' }));

export const dataAvailabilityOp = defineOperation({
  name: 'data_availability',
  method: 'GET',
  path: '/v1/data_availability',
  summary: 'Per band: history available from/to, tempo seconds, materializer; with a cell, which bands are stored there',
  description:
    'Use it before asking for past slots: history_available_from_unix/to_unix say which past tslots this responder can fetch for a band (null: only what is stored). ' +
    'Optional band (one band only) and cell (cell64 or a place name): with a cell, each band says attested_at_cell — whether a public fact of it is stored at that cell (recall then answers without an upstream fetch). ' +
    'Next: recall or fetch_history for the bands you need.',
  tags: ['catalogue'],
  input: Type.Object(
    {
      band: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'one band key (see /v1/bands); default every band' })),
      cell: Type.Optional(Cell),
    },
    { additionalProperties: false },
  ),
  output: Closed({
    schema: Type.String(),
    cell: Type.Optional(Type.String({ description: 'the resolved cell64, when a cell was given' })),
    bands: Type.Array(
      Closed({
        band: Type.String(),
        tempo: Type.String(),
        tempo_seconds: Type.Integer(),
        cadence_s: Type.Number(),
        materializer: Nullable(Type.String()),
        history: Type.Boolean(),
        history_available_from_unix: unix,
        history_available_to_unix: unix,
        source_history_from_unix: unix,
        source_history_to_unix: unix,
        attested_at_cell: Type.Optional(Type.Boolean({ description: 'with a cell: a public fact of the band is stored there' })),
      }),
    ),
  }),
  mcp: 'full',
  run: (ctx, input) => availabilityAt(ctx, input),
});

/** The catalogue, narrowed to one band and/or marked with what is stored at one cell. */
async function availabilityAt(ctx: ServiceContext, input: { band?: string; cell?: string }) {
  const all = dataAvailability(ctx);
  const band = input.band === undefined ? undefined : requireBand(ctx, input.band, 'band').key;
  const bands = band === undefined ? all.bands : all.bands.filter((b) => b.band === band);
  if (input.cell === undefined) return { ...all, bands };
  const { cell } = await resolveCell(ctx, input.cell, 'cell');
  const stored = new Set(await ctx.store.bandsAt(cell, null));
  return { ...all, cell, bands: bands.map((b) => ({ ...b, attested_at_cell: stored.has(b.band) })) };
}

/** The operations of this file, for the operation table. */
export const BACKFILL_OPS: readonly Operation[] = [backfillOp, materializersOp, dataAvailabilityOp];
