/**
 * Change shortcuts over two readings of one band at a cell: burn severity (dNBR classes),
 * deforestation alert (NDVI drop, plus embedding change when both years have vectors) and radar
 * forest disturbance (VV drop). Each reports the two signed inputs it compared; when there are
 * not two usable readings it says `inconclusive` and why, rather than comparing with a zero.
 */
import { TEMPO_UNIT_S, tslotRange, tslotOf } from '../../protocol/tslot.js';
import type { ServiceContext } from '../context/context.js';
import { cosine, isVec, round } from '../reads/common.js';
import { Evidence, derivedPlace, numericValue, tslotPair, twoReadings, type DerivedEnvelope, type DerivedOpts } from './evidence.js';
import type { PlaceInput } from './place.js';

type Reading = { tslot: number; value: number; fact_cid: string };

/** dNBR severity classes (USGS FIREMON, Key and Benson 2006), on the unscaled dNBR. */
export const DNBR_CLASSES = [
  { class: 'unburned', range: 'dNBR < 0.10' },
  { class: 'low', range: '0.10 <= dNBR < 0.27' },
  { class: 'moderate_low', range: '0.27 <= dNBR < 0.44' },
  { class: 'moderate_high', range: '0.44 <= dNBR <= 0.66' },
  { class: 'high', range: 'dNBR > 0.66' },
] as const;

/** Severity class of a dNBR value (see DNBR_CLASSES). */
export function dnbrClass(d: number): (typeof DNBR_CLASSES)[number]['class'] {
  if (d < 0.1) return 'unburned';
  if (d < 0.27) return 'low';
  if (d < 0.44) return 'moderate_low';
  if (d <= 0.66) return 'moderate_high';
  return 'high';
}

export interface BurnInput extends PlaceInput {
  tslot_pre?: number;
  tslot_post?: number;
}

export interface BurnResult extends DerivedEnvelope {
  status: 'ok' | 'inconclusive';
  source: 'indices.dnbr' | 'indices.nbr' | null;
  dnbr: number | null;
  severity: string | null;
  pre: Reading | null;
  post: Reading | null;
  classes: typeof DNBR_CLASSES;
  method: string;
  reason?: string;
}

/** Burn severity at a place's cell: the signed dNBR, or NBR_pre − NBR_post from two NBR facts. */
export async function burnSeverity(ctx: ServiceContext, input: BurnInput, opts: DerivedOpts = {}): Promise<BurnResult> {
  const tslots = tslotPair(ctx, 'indices.nbr', input.tslot_pre, input.tslot_post, 'tslot_pre', 'tslot_post');
  const place = await derivedPlace(ctx, input, opts);
  const cell = place.loc.cell64;
  const ev = new Evidence(ctx, 'burn_severity', opts);
  const method =
    'dNBR = NBR_pre − NBR_post with NBR = (B08 − B12) / (B08 + B12); classes per USGS FIREMON (Key and Benson 2006): < 0.10 unburned, 0.10–0.27 low, 0.27–0.44 moderate-low, 0.44–0.66 moderate-high, > 0.66 high';
  ev.caveat('Negative dNBR (below about −0.1) can mean regrowth after an earlier fire; it is reported as unburned here. Clouds, smoke, harvest or flooding between the two scenes also change NBR.');
  if (!tslots) {
    // Without explicit dates the stored index is preferred: it pins its own pre scene one year before the post scene.
    const f = await ev.read(cell, 'indices.dnbr');
    const d = numericValue(f);
    if (d !== undefined) {
      const env = await ev.envelope(place, cell);
      return { ...env, status: 'ok', source: 'indices.dnbr', dnbr: d, severity: dnbrClass(d), pre: null, post: null, classes: DNBR_CLASSES, method: `signed indices.dnbr fact; ${method}` };
    }
  }
  const pair = await twoReadings(ev, cell, 'indices.nbr', tslots);
  const env0 = async () => ev.envelope(place, cell);
  if (!pair.ok) {
    return { ...(await env0()), status: 'inconclusive', source: null, dnbr: null, severity: null, pre: null, post: null, classes: DNBR_CLASSES, method, reason: pair.reason };
  }
  const d = round(pair.a.value - pair.b.value, 12);
  return {
    ...(await env0()),
    status: 'ok',
    source: 'indices.nbr',
    dnbr: d,
    severity: dnbrClass(d),
    pre: pair.a,
    post: pair.b,
    classes: DNBR_CLASSES,
    method: `from two signed indices.nbr facts (pre = earlier tslot); ${method}`,
  };
}

export interface TwoSlotInput extends PlaceInput {
  tslot_a?: number;
  tslot_b?: number;
}

/** As the schema admits it: threshold in (0, 2], NDVI_DROP_DEFAULT when not given. */
export interface DeforestationInput extends TwoSlotInput {
  threshold: number;
}

export const NDVI_DROP_DEFAULT = 0.15;
export const EMBEDDING_BAND = 'geotessera';

export interface EmbeddingChange {
  status: 'ok' | 'unavailable';
  slot_a: number | null;
  slot_b: number | null;
  cosine: number | null;
  /** 1 − cosine: 0 = same representation, up to 2 = opposite. */
  change: number | null;
  reason?: string;
}

export interface DeforestationResult extends DerivedEnvelope {
  status: 'ok' | 'inconclusive';
  alert: boolean | null;
  threshold: number;
  a: Reading | null;
  b: Reading | null;
  ndvi_drop: number | null;
  embedding: EmbeddingChange;
  method: string;
  reason?: string;
}

/** The yearly embedding slot that contains the start of a medium tslot. */
function yearSlot(mediumTslot: number): number {
  return tslotOf(tslotRange(mediumTslot, 'medium').start_unix, 'slow');
}

async function embeddingChange(ev: Evidence, cell: string, ta: number, tb: number): Promise<EmbeddingChange> {
  const ya = yearSlot(ta);
  const yb = yearSlot(tb);
  if (ya === yb)
    return {
      status: 'unavailable',
      slot_a: ya,
      slot_b: yb,
      cosine: null,
      change: null,
      reason: `both NDVI slots fall in the same ${TEMPO_UNIT_S.slow / 86_400}-day embedding slot (${ya}): no year-to-year change to measure`,
    };
  const fa = await ev.read(cell, EMBEDDING_BAND, ya);
  const fb = await ev.read(cell, EMBEDDING_BAND, yb);
  const va = fa && fa.kind !== 'absence' && isVec(fa.value) ? (fa.value as number[]) : undefined;
  const vb = fb && fb.kind !== 'absence' && isVec(fb.value) ? (fb.value as number[]) : undefined;
  if (!va || !vb || va.length !== vb.length) {
    return {
      status: 'unavailable',
      slot_a: ya,
      slot_b: yb,
      cosine: null,
      change: null,
      reason: `no ${EMBEDDING_BAND} vector for ${[!va ? `slot ${ya}` : '', !vb ? `slot ${yb}` : ''].filter(Boolean).join(' and ') || 'matching dimensions'} (see materialize_notes)`,
    };
  }
  const c = cosine(va, vb);
  if (c === null) return { status: 'unavailable', slot_a: ya, slot_b: yb, cosine: null, change: null, reason: 'a zero-length vector has no direction' };
  return { status: 'ok', slot_a: ya, slot_b: yb, cosine: round(c, 10), change: round(1 - c, 10) };
}

/** NDVI drop between two tslots (given, or the two newest stored) ≥ threshold, plus embedding change. */
export async function deforestationAlert(ctx: ServiceContext, input: DeforestationInput, opts: DerivedOpts = {}): Promise<DeforestationResult> {
  const { threshold } = input;
  const tslots = tslotPair(ctx, 'indices.ndvi', input.tslot_a, input.tslot_b, 'tslot_a', 'tslot_b');
  const place = await derivedPlace(ctx, input, opts);
  const cell = place.loc.cell64;
  const ev = new Evidence(ctx, 'deforestation_alert', opts);
  const pair = await twoReadings(ev, cell, 'indices.ndvi', tslots);
  const slots = pair.ok ? [pair.a.tslot, pair.b.tslot] : tslots;
  const embedding = slots
    ? await embeddingChange(ev, cell, slots[0], slots[1])
    : { status: 'unavailable' as const, slot_a: null, slot_b: null, cosine: null, change: null, reason: 'no NDVI slots to date the embeddings' };
  const method = `alert when NDVI(a) − NDVI(b) ≥ threshold (default ${NDVI_DROP_DEFAULT}), a earlier than b; embedding change = 1 − cosine of the ${EMBEDDING_BAND} vectors of the two years (reported, not part of the alert rule)`;
  ev.caveat(
    'An NDVI drop also follows harvest, drought, fire, cloud or seasonal senescence: compare slots of the same season, and confirm a clearing with radar (/v1/sar_forest_disturbance) or the embedding change.',
  );
  const env = await ev.envelope(place, cell);
  if (!pair.ok) return { ...env, status: 'inconclusive', alert: null, threshold, a: null, b: null, ndvi_drop: null, embedding, method, reason: pair.reason };
  const drop = round(pair.a.value - pair.b.value, 12);
  return { ...env, status: 'ok', alert: drop >= threshold, threshold, a: pair.a, b: pair.b, ndvi_drop: drop, embedding, method };
}

/** As the schema admits it: threshold_db in (0, 30], VV_DROP_DB when not given. */
export interface SarInput extends TwoSlotInput {
  threshold_db: number;
}

export const VV_DROP_DB = 3;

export interface SarResult extends DerivedEnvelope {
  status: 'ok' | 'inconclusive';
  disturbance: boolean | null;
  threshold_db: number;
  a: Reading | null;
  b: Reading | null;
  vv_drop_db: number | null;
  method: string;
  reason?: string;
}

/** Radar forest disturbance: Sentinel-1 VV backscatter drop of threshold_db (default 3 dB) or more. */
export async function sarForestDisturbance(ctx: ServiceContext, input: SarInput, opts: DerivedOpts = {}): Promise<SarResult> {
  const threshold = input.threshold_db;
  const tslots = tslotPair(ctx, 's1.vv_db', input.tslot_a, input.tslot_b, 'tslot_a', 'tslot_b');
  const place = await derivedPlace(ctx, input, opts);
  const cell = place.loc.cell64;
  const ev = new Evidence(ctx, 'sar_forest_disturbance', opts);
  const pair = await twoReadings(ev, cell, 's1.vv_db', tslots);
  ev.caveat(
    'Single-date Sentinel-1 backscatter at 10 m carries speckle of the order of 1 to 2 dB, and rain or soil moisture shifts VV too: one pair of dates is an indication; repeated drops over several dates are stronger evidence.',
  );
  const env = await ev.envelope(place, cell);
  const method = `disturbance when VV(a) − VV(b) ≥ threshold_db (default ${VV_DROP_DB} dB), a earlier than b, on signed s1.vv_db facts (dB)`;
  if (!pair.ok) return { ...env, status: 'inconclusive', disturbance: null, threshold_db: threshold, a: null, b: null, vv_drop_db: null, method, reason: pair.reason };
  const drop = round(pair.a.value - pair.b.value, 12);
  return { ...env, status: 'ok', disturbance: drop >= threshold, threshold_db: threshold, a: pair.a, b: pair.b, vv_drop_db: drop, method };
}
