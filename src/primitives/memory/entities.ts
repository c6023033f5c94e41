/**
 * Entities (docs/entities.md): one identity per real-world object. A `memory.entity` record
 * {kind, name, geometry, attributes?} is minted by the responder and filed under
 * `svc:entity:<entity_cid>`, where entity_cid = anchorId(value): the same content always names
 * the same entity, so minting is idempotent. Aliases (`memory.alias`, signed by the caller) say
 * that a phrasing means an entity; resolving a phrasing is in entity-resolve.ts.
 *
 * Every read and write names one scope (none: public records only) and sees only records
 * written under exactly that scope: a caller outside a scope learns nothing of its entities.
 */
import { encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { anchorId, isAnchorId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { scopeFieldsSet, type Receipt, type Scope } from '../../protocol/receipt.js';
import type { StoredFact } from '../../store/contract.js';
import { scopeKey } from '../../store/entry.js';
import { ALIAS_BAND, ENTITY_BAND } from '../../store/memory.js';
import { AddressQuota, addressKey, quotaPerOwner } from '../../lib/address-quota.js';
import { acceptBatch, mintedBody, mintFacts, type AttestRequest, type AttestResult } from '../write/attest.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { mapLimit, READ_CONCURRENCY } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { parsePolygon, sampleArea } from '../reads/geometry.js';
import { recallMany, type CellResponse } from '../reads/many.js';
import { resolveBands, resolveCell, type SignedResponse } from '../reads/recall.js';
import { parseToken } from '../../protocol/token-grammar.js';
import { checkRecord } from '../write/record-rules.js';
import { recordSubject } from '../../protocol/memory-records.js';

/** Sample cells a polygon entity reads (and lists) at most. */
export const ENTITY_POLYGON_CELLS = 64;
export const MAX_ALIASES_PER_WRITE = 64;
export const MAX_NAME = 200;
export const MAX_ATTRIBUTES = 64;
export const MAX_ATTRIBUTE_TEXT = 500;
/** Positions of a polygon entity's one ring (record-rules.ts: no holes). */
export const MAX_POLYGON_POSITIONS = 1000;

/** Length in characters (code points), as the record rules count it. */
function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A mint request, as the operation's schema admits it (types, kind's pattern and sizes already checked). */
export interface EntityRequest {
  kind: string;
  name: string;
  geometry: { cell?: string; polygon?: { type: 'Polygon'; coordinates: unknown[][] } };
  attributes?: Record<string, string | number | boolean>;
  scope?: Scope;
}

/** The value of a `memory.entity` record: the identity itself. */
export interface EntityValue {
  kind: string;
  name: string;
  geometry: { cell: string } | { polygon: { type: 'Polygon'; coordinates: Array<Array<[number, number]>> } };
  attributes?: Record<string, string | number | boolean>;
}

/** The subject an entity's record and the facts about it are filed under (literal `svc:`, as acceptBatch requires). */
export function entitySubject(entityCid: string): string {
  return `svc:entity:${entityCid}`;
}

/** The token handed to other agents for an entity (the deployment's prefix word). */
export function entityToken(ctx: ServiceContext, entityCid: string): string {
  return `${ctx.config.prefix}:entity:${entityCid}`;
}

/**
 * An entity reference: a bare entity_cid, `<prefix>:entity:<cid>`, `svc:entity:<cid>` or the
 * legacy `meme:<cid>`. Anything else is invalid_argument naming `field`.
 */
export function entityRef(ctx: ServiceContext, v: unknown, field: string): string {
  if (isAnchorId(v)) return v;
  if (typeof v === 'string' && /^svc:entity:[a-z2-7]{26}$/.test(v) && isAnchorId(v.slice(11))) return v.slice(11);
  let parsed;
  try {
    parsed = parseToken(ctx.config.prefix, v);
  } catch {
    parsed = undefined;
  }
  if (parsed?.kind === 'entity' && isAnchorId(parsed.entity_cid)) return parsed.entity_cid;
  throw invalidArgument(field, `expected an entity_cid (26 base32 characters), ${ctx.config.prefix}:entity:<entity_cid> or meme:<entity_cid>`);
}

// ---- value ------------------------------------------------------------------------------------

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A GeoJSON Polygon, validated (positions, rings) and reduced to {type, coordinates} (numbers only). */
function polygonValue(v: NonNullable<EntityRequest['geometry']['polygon']>, field: string): { type: 'Polygon'; coordinates: Array<Array<[number, number]>> } {
  const area = parsePolygon(v, field);
  const rings = area.polygons[0];
  if (rings.length !== 1) throw invalidArgument(`${field}.coordinates`, `expected exactly one ring (no holes), got ${rings.length} rings`);
  if (rings[0].length > MAX_POLYGON_POSITIONS) throw invalidArgument(`${field}.coordinates[0]`, `at most ${MAX_POLYGON_POSITIONS} positions (got ${rings[0].length})`);
  return { type: 'Polygon', coordinates: [rings[0].map(([lng, lat]) => [lng, lat] as [number, number])] };
}

/** Attributes (flat and at most MAX_ATTRIBUTES, by the schema): names and texts within their lengths. */
function attributesValue(v: EntityRequest['attributes']): Record<string, string | number | boolean> | undefined {
  if (v === undefined) return undefined;
  const entries = Object.entries(v);
  const out: Record<string, string | number | boolean> = {};
  for (const [k, x] of entries) {
    if (k.length === 0 || chars(k) > 64) throw invalidArgument(`attributes.${k}`, 'attribute names are 1..64 characters');
    if (typeof x === 'string' && chars(x) > MAX_ATTRIBUTE_TEXT) throw invalidArgument(`attributes.${k}`, `at most ${MAX_ATTRIBUTE_TEXT} characters`);
    out[k] = x;
  }
  // No attributes and an empty map are the same content: both leave the field out.
  return entries.length > 0 ? out : undefined;
}

/**
 * The entity value of a request, normalized: name trimmed (case kept), a cell given as a place
 * name or cell token stored as its cell64, a polygon reduced to {type, coordinates}, empty
 * attributes left out. Equal content → equal value → equal entity_cid.
 */
export async function entityValue(ctx: ServiceContext, req: Omit<EntityRequest, 'scope'>): Promise<{ value: EntityValue; place?: SignedResponse['place'] }> {
  const name = req.name.trim();
  if (name.length === 0 || chars(name) > MAX_NAME) throw invalidArgument('name', `expected 1..${MAX_NAME} characters (after trimming)`);
  const g = req.geometry;
  if ((g.cell === undefined) === (g.polygon === undefined)) throw invalidArgument('geometry', 'give exactly one of cell, polygon');
  let geometry: EntityValue['geometry'];
  let place: SignedResponse['place'];
  if (g.cell !== undefined) {
    const r = await resolveCell(ctx, g.cell, 'geometry.cell');
    geometry = { cell: r.cell };
    place = r.place;
  } else {
    geometry = { polygon: polygonValue(g.polygon!, 'geometry.polygon') };
  }
  const attributes = attributesValue(req.attributes);
  return { value: { kind: req.kind, name, geometry, ...(attributes ? { attributes } : {}) }, ...(place ? { place } : {}) };
}

/** The cells an entity covers: its cell, or up to 64 deterministic sample cells of its polygon. */
export function entityCells(value: unknown): string[] {
  const g = isPlainObject(value) ? value.geometry : undefined;
  if (!isPlainObject(g)) return [];
  if (typeof g.cell === 'string') return [g.cell];
  if (g.polygon !== undefined) {
    try {
      return sampleArea(parsePolygon(g.polygon, 'geometry.polygon'), ENTITY_POLYGON_CELLS).cells;
    } catch {
      return []; // a stored record is served as signed, even one this rule would now refuse
    }
  }
  return [];
}

/** The responder-signed body of an entity record (docs/protocol-notes.md §4; docs/entities.md), filed under its anchor. */
function entityBody(ctx: ServiceContext, value: EntityValue, scope: Scope | undefined): Record<string, unknown> {
  return mintedBody(ctx, {
    kind: 'primary',
    cell: recordSubject(ENTITY_BAND, value as unknown as Record<string, unknown>),
    band: ENTITY_BAND,
    tslot: 0,
    value,
    unit: 'record',
    provenance: `${ctx.config.prefix}.entity`,
    derivation: { fn: 'entity@1', sources: ['entity'] },
    scope,
  });
}

/** The entity's record visible in `scope` (null: public), or null. */
export async function entityRecord(ctx: ServiceContext, entityCid: string, scope: Scope | null): Promise<StoredFact | null> {
  const { facts } = await ctx.store.readLatest({ cell: entitySubject(entityCid), bands: [ENTITY_BAND], scope });
  return facts.find((f) => f.band === ENTITY_BAND) ?? null;
}

// ---- mint -------------------------------------------------------------------------------------

export interface EntityAnswer {
  entity_cid: string;
  token: string;
  created: boolean;
  entity: unknown;
  cells: string[];
  fact: ServedFact;
  /** When geometry.cell was a place name: how it resolved (check is_high_confidence). */
  place?: SignedResponse['place'];
  receipt: Receipt;
}

// New entities are metered per client address like new bundles (anonymous, idempotent writes).
const quotaOf = quotaPerOwner<ServiceContext>((ctx) => new AddressQuota(ctx.config.bundleQuota, 'entities'));
// Mints in flight per store and (scope, entity): concurrent identical requests to one store share
// one record. Per store, because two responders in one process (tests, embedders) must never
// answer one's mint with the other's record, which their own store then lacks.
const mintingByStore = new WeakMap<object, Map<string, Promise<StoredFact>>>();
function mintsInFlight(ctx: ServiceContext): Map<string, Promise<StoredFact>> {
  let m = mintingByStore.get(ctx.store);
  if (!m) mintingByStore.set(ctx.store, (m = new Map()));
  return m;
}

/** Mint `value` in `scope` unless it is stored already; a new record is charged to `ip`. */
async function ensureRecord(ctx: ServiceContext, value: EntityValue, scope: Scope | undefined, ip: string | undefined): Promise<{ fact: StoredFact; created: boolean }> {
  const cid = anchorId(value);
  const found = await entityRecord(ctx, cid, scope ?? null);
  if (found) return { fact: found, created: false };
  const key = `${scopeKey(scope)}|${cid}`;
  const minting = mintsInFlight(ctx);
  const pending = minting.get(key);
  if (pending) return { fact: await pending, created: false };
  const body = entityBody(ctx, value, scope);
  const refund = quotaOf(ctx).take(addressKey(ip), encodeCanonical(body as CborValue).length, ctx.now().getTime());
  const write = (async () => {
    const res = await mintFacts(ctx, [body], 'entity');
    const f = (await ctx.store.readFact(res.fact_cids[0])).fact;
    if (!f) throw new SvcError('internal', `entity ${cid}: the minted record ${res.fact_cids[0]} is not readable`);
    return f;
  })();
  minting.set(key, write);
  try {
    return { fact: await write, created: true };
  } catch (err) {
    refund();
    throw err;
  } finally {
    minting.delete(key);
  }
}

/** POST /v1/entity: the one identity of {kind, name, geometry, attributes?}, minted on first use. */
export async function mintEntity(ctx: ServiceContext, req: EntityRequest, caller: { ip?: string } = {}): Promise<EntityAnswer> {
  const scope = requestScope(req.scope);
  const { value, place } = await entityValue(ctx, req);
  const { fact: f, created } = await ensureRecord(ctx, value, scope, caller.ip);
  const entity_cid = anchorId(value);
  const cells = entityCells(f.body.value);
  return {
    entity_cid,
    token: entityToken(ctx, entity_cid),
    created,
    entity: f.body.value,
    cells,
    fact: await serveFact(ctx, f),
    ...(place ? { place } : {}),
    receipt: issueReceipt(ctx, 'entity', [f.cell, ...cells], [f.fact_cid], { scope, merkle_proof: f.proof, cost: { credits: 0, was_cached: !created } }),
  };
}

// ---- aliases ----------------------------------------------------------------------------------

export interface AliasWriteResult extends AttestResult {
  aliases: Array<{ fact_cid: string; entity_cid: string; phrase: string }>;
}

/**
 * POST /v1/entity/alias: 1..64 `memory.alias` records signed by the caller, each naming an
 * entity whose record exists in the batch's scope. Order: shape → acceptBatch's checks
 * (authentication, scope binding) → every named entity exists (cid_not_found naming
 * facts[i].value.entity) → append. Every refusal comes before anything is written.
 */
export async function writeAliases(ctx: ServiceContext, req: AttestRequest): Promise<AliasWriteResult> {
  const facts = req?.facts;
  if (!Array.isArray(facts) || facts.length === 0 || facts.length > MAX_ALIASES_PER_WRITE) {
    throw invalidArgument('facts', `expected 1..${MAX_ALIASES_PER_WRITE} ${ALIAS_BAND} records`);
  }
  const refs = facts.map((f, i) => {
    const at = `facts[${i}]`;
    if (!isPlainObject(f)) throw invalidArgument(at, 'expected an object');
    if (f.band !== ALIAS_BAND) throw invalidArgument(`${at}.band`, `expected ${ALIAS_BAND} (entities are minted with POST /v1/entity; other records go through /v1/attest)`);
    // The record rules acceptBatch applies (value fields, subject), first: a malformed alias is refused as such.
    checkRecord(at, f, String(f.kind), String(f.cell), ALIAS_BAND, f.tslot === undefined ? 0 : (f.tslot as number));
    const v = f.value as { entity: string; phrase: string };
    let scope: Scope | null = null;
    if (f.scope !== undefined) {
      if (!isPlainObject(f.scope)) throw invalidArgument(`${at}.scope`, 'expected {user_id?, agent_id?, run_id?, org_id?} of strings');
      scope = scopeFieldsSet(f.scope as Scope) ?? null;
    }
    return { entity: v.entity, phrase: v.phrase, scope };
  });
  // Whether an entity exists in a scope is told only to a key that signed the batch and may write there.
  const res = await acceptBatch(ctx, req, 'entity_alias', {
    beforeAppend: async (scope) => {
      const distinct = [...new Set(refs.map((r) => r.entity))];
      const found = await mapLimit(distinct, READ_CONCURRENCY, async (cid) => (await entityRecord(ctx, cid, scope)) !== null);
      const missing = new Set(distinct.filter((_, i) => !found[i]));
      const at = refs.findIndex((r) => missing.has(r.entity));
      if (at >= 0) {
        const field = `facts[${at}].value.entity`;
        throw new SvcError('cid_not_found', `${field}: no entity ${refs[at].entity} is stored here${scope ? ' in this scope' : ''} (mint it first with POST /v1/entity)`, {
          field,
          entity_cid: refs[at].entity,
        });
      }
    },
  });
  return { ...res, aliases: res.fact_cids.map((fact_cid, i) => ({ fact_cid, entity_cid: refs[i].entity, phrase: refs[i].phrase })) };
}

// ---- recall by entity -------------------------------------------------------------------------

/** A recall by entity, as the operation's schema admits it. */
export interface EntityRecallRequest {
  entity: string;
  bands?: string[];
  scope?: Scope;
}

export interface EntityRecallResult {
  entity_cid: string;
  token: string;
  entity: unknown;
  cells: string[];
  /** Newest fact per band filed under the entity's own subject (its record included). */
  own_facts: ServedFact[];
  /** Per cell of the entity: its facts and a receipt of its own. */
  by_cell: Record<string, CellResponse | { cell: string; facts: ServedFact[]; receipt: Receipt }>;
  receipt: Receipt;
}

/**
 * POST /v1/entity/recall: the facts filed under the entity itself plus the facts at its cells.
 * Without `bands` the cells' stored facts are read (nothing is fetched); with `bands` each cell
 * is read through recall_many, which materializes the asked bands on a miss.
 */
export async function recallEntity(ctx: ServiceContext, req: EntityRecallRequest, opts: { deadline?: number } = {}): Promise<EntityRecallResult> {
  const entity_cid = entityRef(ctx, req.entity, 'entity');
  const scope = requestScope(req.scope);
  if (req.bands !== undefined) resolveBands(ctx, req.bands);
  const record = await entityRecord(ctx, entity_cid, scope ?? null);
  if (!record) throw new SvcError('cid_not_found', `entity: no entity ${entity_cid} is stored here${scope ? ' in this scope' : ''}`, { field: 'entity', entity_cid });
  const subject = record.cell;
  const cells = entityCells(record.body.value);
  const own = (await ctx.store.readLatest({ cell: subject, scope: scope ?? null })).facts.sort((a, b) => (a.band < b.band ? -1 : a.band > b.band ? 1 : 0));
  const own_facts = await Promise.all(own.map((f) => serveFact(ctx, f)));
  let by_cell: EntityRecallResult['by_cell'];
  if (req.bands !== undefined && cells.length > 0) {
    by_cell = (await recallMany(ctx, { cells, bands: req.bands, scope: scope }, { deadline: opts.deadline })).by_cell;
  } else {
    by_cell = {};
    const read = await mapLimit(cells, READ_CONCURRENCY, async (cell) => {
      const stored = (await ctx.store.readLatest({ cell, scope: scope ?? null })).facts.sort((a, b) => (a.band < b.band ? -1 : a.band > b.band ? 1 : 0));
      const facts = await Promise.all(stored.map((f) => serveFact(ctx, f)));
      return {
        cell,
        facts,
        receipt: issueReceipt(
          ctx,
          'entity_recall',
          [cell],
          facts.map((f) => f.fact_cid),
          { scope, merkle_proof: stored[0]?.proof },
        ),
      };
    });
    for (const r of read) if (r) by_cell[r.cell] = r;
  }
  return {
    entity_cid,
    token: entityToken(ctx, entity_cid),
    entity: record.body.value,
    cells,
    own_facts,
    by_cell,
    receipt: issueReceipt(
      ctx,
      'entity_recall',
      [subject, ...cells],
      own_facts.map((f) => f.fact_cid),
      { scope, merkle_proof: own[0]?.proof },
    ),
  };
}
