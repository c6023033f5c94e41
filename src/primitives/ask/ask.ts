/**
 * ask (docs/ask.md): a plain question → the place, the topic, the signed facts, the algorithms, a
 * deterministic answer and literal next calls. Routing is lexical (router.ts, no model), the
 * place goes through locate, the facts through recall (every missing band fetched in parallel),
 * similar places through find_similar, change through state_diff, corpus questions through the
 * coverage surfaces. One receipt at the root binds every fact_cid the answer used, with the
 * question as its (unsigned) intent; the answer step gets an `svc:state:` token.
 */
import type { LocateResp } from '../../geo/types.js';
import type { AnswerParts } from '../../protocol/answer-parts.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { tslotOf } from '../../protocol/tslot.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import type { TopicEntry } from '../../registry/registry.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { algorithmsFor, type AlgorithmForQuestion } from './evaluate.js';
import { algorithmStep, atStep, coverageSteps, locateStep, recallStep, topicsStep, type NextStep } from '../steps/next-steps.js';
import { checkPlaceFields, resolveAskPlace, type AskPlace } from './place.js';
import { readChange, readCorpus, readSimilar, readTopic, type Gathered } from './reads.js';
import type { MatchedKeyword, RouteResult } from './router.js';
import { ASK_REPLY_CAP_BYTES, fitReply } from './size.js';
import { stateRecord, type AskState } from './state-record.js';
import { keepState, type StateKeep } from './state-store.js';
import { requestScope } from '../scopes/request.js';
import { hunt, type HuntResult } from '../hunt/hunt.js';
import { HUNT_MAX_AREA_KM2 } from '../hunt/region.js';
import { boxAreaKm2, boxCentre, boxWidth } from '../../geo/geometry.js';
import { compositePlan, planBands, type CompositePlan } from './composite.js';
import { compositeSteps, dedupe, hasExtent, huntSteps, imageSteps, topicalSteps } from './steps.js';
import { changeAnswer, corpusAnswer, huntAnswer, huntResultAnswer, outOfScopeAnswer, similarAnswer, topicalAnswer, type Composed } from './templates.js';
import type { TimeWindow } from './time.js';
import { understand, type Understanding } from './understand.js';

/** A question, as the operation's schema admits it (types, bounds and defaults already applied). */
export interface AskRequest {
  q: string;
  place?: string;
  cell?: string;
  lat?: number;
  lng?: number;
  include_image?: boolean;
  verbose?: boolean;
  /** Where the answer step is kept (state-store.ts): `transient` (outside the log) by default. */
  keep: StateKeep;
  /** With keep: "scope", the scope the step is kept in (the caller's bearer must be for it). */
  scope?: Scope;
}

export interface AskResponse {
  /** A hunt question over a place with extent: the hunt's hotspots (its fact_cids are in the receipt). */
  hunt?: Pick<HuntResult, 'event' | 'algorithm' | 'region' | 'cells_sampled' | 'hotspots' | 'summary'> & { empty_reason?: string };
  answer: string;
  answer_md: string;
  /** The sentences `answer` and `answer_md` render from: words, and slots citing the signed facts and cells (docs/verification.md). */
  answer_parts: AnswerParts;
  /** The top-1 topic; null when out of scope (then topic_inventory lists all 26). */
  matched_topic: string | null;
  topic_routing: { matched_topics: string[]; matched_keywords: MatchedKeyword[]; out_of_scope: boolean; routing: Record<string, unknown> };
  topic_inventory?: Array<{ key: string; title: string; description?: string }>;
  facts: { facts: ServedFact[]; bands_already_attested_at_cell: string[]; band_info?: Record<string, unknown> };
  algorithms_for_question: AlgorithmForQuestion[];
  caveats: string[];
  materialize_notes: MaterializeNote[];
  place_resolved: LocateResp | Record<string, unknown> | null;
  foundation_embeddings: Record<string, unknown>;
  next_steps: NextStep[];
  time: Record<string, unknown> | null;
  image_url?: string;
  corpus?: Record<string, unknown>;
  state: AskState;
  trimmed?: string[];
  receipt: Receipt;
}

const ROUTER = `lexical@1`;

/** What the schema cannot say: a question of words, one way to name the place, scope with keep "scope" only. */
function checkRequest(req: AskRequest): void {
  if (req.q.trim() === '') throw invalidArgument('q', 'expected a non-empty question');
  checkPlaceFields(req);
  if (req.keep === 'scope' && !requestScope(req.scope)) throw invalidArgument('scope', 'keep: "scope" keeps the answer step in a scope: name it (and send its bearer)');
  if (req.keep !== 'scope' && req.scope !== undefined) throw invalidArgument('scope', 'only with keep: "scope" (ask reads public facts; the scope says where the answer step is kept)');
}

const empty = (): Gathered => ({ facts: [], bandsAttested: [], notes: [], caveats: [], extraCells: [], extraCids: [], embeddings: {}, steps: [], timeMode: null });

/** The routing block of the response: why the question went where it went. */
function routingBlock(u: Understanding, place: AskPlace): Record<string, unknown> {
  const r = u.routing;
  return {
    method: 'lexical',
    router: ROUTER,
    intent: r.intent,
    matched_topic: r.topic,
    scores: r.scores,
    negated: r.negated,
    hunt_event: r.hunt ? { event: r.hunt.event, term: r.hunt.term, algorithm: r.hunt.algorithm } : null,
    cues: r.cues,
    off_topic: r.off_topic,
    ...(r.composite ? { composite: r.composite } : {}),
    place_text: place.query ?? (u.extraction.place && u.extraction.place.kind !== 'name' ? u.extraction.place.text : null),
    place_source: place.source,
  };
}

function unique<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)];
}

/** Answer one question (see the module note). */
export async function ask(ctx: ServiceContext, req: AskRequest, opts: { deadline?: number } = {}): Promise<AskResponse> {
  checkRequest(req);
  const started = performance.now();
  const deadline = opts.deadline ?? Date.now() + ctx.config.timeoutSecs * 1000;
  const u = understand(ctx.registry, req.q, ctx.now(), { placeGiven: req.place !== undefined || req.cell !== undefined || req.lat !== undefined });
  const r = u.routing;
  const topic: TopicEntry | undefined = r.topic ? ctx.registry.topics.get(r.topic) : undefined;
  const place = await resolveAskPlace(ctx, req, u, { deadline, offlineOnly: r.intent === 'out_of_scope' || r.intent === 'corpus' });
  const loc = place.loc;
  const cell = loc?.cell64;
  const placeError = place.error ? `the place "${place.error.text}" could not be resolved (${place.error.code}: ${place.error.message})` : undefined;

  let g = empty();
  let corpus: Awaited<ReturnType<typeof readCorpus>> | undefined;
  let attestedHere: string[] = [];
  let huntRun: HuntResult | undefined;
  // A composite question reads the telling bands of each topic it spans in one recall (composite.ts).
  const plan: CompositePlan | null = topic && r.intent === 'topical' ? compositePlan(ctx.registry, topic, r.composite) : null;
  const routedBands = plan ? plan.routed : [...(topic?.bands ?? [])];
  if (cell && topic && r.intent === 'topical') g = await readTopic(ctx, cell, plan ? planBands(plan) : routedBands, u.time, deadline);
  else if (cell && r.intent === 'similar') g = await readSimilar(ctx, cell, deadline);
  else if (cell && topic && r.intent === 'change') g = await readChange(ctx, cell, [...topic.bands], u.time, deadline);
  else if (r.intent === 'hunt' && r.hunt && loc?.polygon_bbox && hasExtent(loc)) huntRun = await runHunt(ctx, r.hunt.event, loc, deadline, g);
  else if (r.intent === 'corpus') {
    corpus = await readCorpus(ctx, topic?.bands ?? []);
    if (cell) attestedHere = await ctx.store.bandsAt(cell, null);
  }

  const inScope = r.intent !== 'out_of_scope' && r.intent !== 'corpus';
  const algorithms = topic && inScope ? algorithmsFor(ctx.registry, [topic.key], g.facts, cell !== undefined && r.intent !== 'hunt') : [];
  const have = new Set(g.facts.map((f) => String(f.band)));
  const missing = topic && r.intent === 'topical' && cell ? routedBands.filter((b) => !have.has(b)) : [];

  // Next steps, by intent.
  let steps: NextStep[] = [...g.steps];
  if (r.intent === 'topical' && topic && loc) {
    const huntEvent = ctx.registry.huntEventList.find((e) => e.algorithm && ctx.registry.algorithms.get(e.algorithm)?.topic === topic.key)?.event;
    steps.push(...topicalSteps({ ctx, q: req.q, topic, loc, query: place.query, missing, notes: g.notes, algorithms, huntEvent }));
    if (plan && r.composite) steps.push(...compositeSteps(ctx, loc.cell64, planBands(plan), [topic.key, ...plan.others.map((o) => o.topic.key)], r.composite.frame));
  } else if (r.intent === 'hunt' && r.hunt && huntRun) {
    steps.push(...huntRun.next_steps);
  } else if (r.intent === 'hunt' && r.hunt) {
    steps.push(...huntSteps(ctx, r.hunt.event, r.hunt.algorithm, loc, place.query ?? loc?.label));
  } else if (r.intent === 'similar' && loc && !g.embeddings.geotessera) {
    steps.push(recallStep(loc.cell64, ['geotessera'], "fetches the cell's GeoTessera embedding, which similar places are ranked by"));
  } else if (r.intent === 'corpus') steps.push(...coverageSteps());
  else if (r.intent === 'out_of_scope') steps.push(...(loc ? [atStep(loc.cell64)] : []), topicsStep());
  if (!loc && inScope) {
    if (place.error) steps.push(locateStep(place.error.text));
    if (topic?.algorithms[0]) steps.push(algorithmStep(topic.algorithms[0]));
  }
  if (inScope) steps.push(...imageSteps(req.include_image, loc));
  steps = dedupe(steps);

  // The receipt binds every cell and fact_cid the answer used.
  // Only cells something was read at: an out-of-scope or hunt answer resolves a place but reads nothing there.
  const readAt = cell && (r.intent === 'topical' || r.intent === 'similar' || r.intent === 'change' || r.intent === 'corpus');
  const cells = unique([...(readAt ? [cell] : []), ...g.extraCells]);
  const cids = unique([...g.facts.map((f) => f.fact_cid), ...g.extraCids]);
  const lat = ctx.metrics.latency('ask');
  const ms = Number((performance.now() - started).toFixed(2));
  const receipt = issueReceipt(ctx, 'ask', cells, cids, {
    intent: req.q,
    cost: { credits: 0, was_cached: g.notes.every((n) => n.status !== 'materialized'), latency_p50_ms: lat?.p50_ms ?? ms, latency_p99_ms: lat?.p99_ms ?? ms },
  });

  const composed = compose(ctx, u, r, topic, place, placeError, g, algorithms, missing, corpus, attestedHere, loc, huntRun, plan);
  const caveats = unique([
    ...g.caveats,
    ...(loc && place.source !== 'cell' && place.source !== 'latlng'
      ? ['The place name is not signed: the receipt covers the cells read; check place_resolved (selected.is_high_confidence) before trusting a place-anchored answer.']
      : []),
    ...(loc && hasExtent(loc) && r.intent === 'topical' ? [`${loc.label} has extent; the facts are read at its centre cell (about 10 m), not over the whole area.`] : []),
    ...(placeError ? [`${placeError}.`] : []),
    ...(req.include_image && loc && !ctx.materializers.forBand('s2.B04') ? ['image_url: no Sentinel-2 connector is wired on this responder, so the thumbnail answers 404 cid_not_found.'] : []),
  ]);
  const state = stateRecord(ctx, {
    question: req.q,
    routing: r,
    time: u.time,
    answer: composed.text,
    receipt,
    place: loc ? { cell64: loc.cell64, label: loc.label, via: loc.via, lat: loc.lat, lng: loc.lng, is_high_confidence: loc.selected?.is_high_confidence ?? false } : null,
  });
  // Keep the step so its token resolves later: outside the log unless the caller opted in.
  try {
    await keepState(ctx, state, cids, req.keep, requestScope(req.scope) ?? undefined);
  } catch (err) {
    if (!(err instanceof SvcError) || (err.code !== 'storage_full' && err.code !== 'overloaded')) throw err;
    caveats.push(`The answer step could not be kept (${err.code}): its svc:state: token does not resolve; ask again later to get one that does.`);
  }

  const reply: AskResponse = {
    answer: composed.text,
    answer_md: composed.md,
    answer_parts: composed.parts,
    matched_topic: r.out_of_scope ? null : r.topic,
    topic_routing: { matched_topics: r.matched_topics, matched_keywords: r.matched_keywords, out_of_scope: r.out_of_scope, routing: routingBlock(u, place) },
    facts: { facts: g.facts, bands_already_attested_at_cell: g.bandsAttested.length ? g.bandsAttested : attestedHere },
    algorithms_for_question: algorithms,
    caveats,
    materialize_notes: g.notes,
    place_resolved: loc ?? place.candidate ?? null,
    foundation_embeddings: g.embeddings,
    next_steps: steps,
    time: u.time
      ? { expression: u.time.expression, kind: u.time.kind, start_unix: u.time.start_unix, end_unix: u.time.end_unix, label: u.time.label, tslots: tslotsOf(ctx, topic, u.time), read_as: g.timeMode }
      : null,
    state,
    receipt,
  };
  if (huntRun) {
    const { event, algorithm, region, cells_sampled, hotspots, empty_reason, summary } = huntRun;
    reply.hunt = { event, algorithm, region, cells_sampled, hotspots, ...(empty_reason ? { empty_reason } : {}), summary };
  }
  if (r.out_of_scope) reply.topic_inventory = ctx.registry.topicList.map((t) => ({ key: t.key, title: t.title, ...(t.description ? { description: t.description } : {}) }));
  if (req.include_image && loc) reply.image_url = `/v1/cells/${encodeURIComponent(loc.cell64)}/scene.png`;
  if (corpus) reply.corpus = { ...corpus.stats, ...(corpus.availability ? { availability: corpus.availability } : {}) };
  if (req.verbose) {
    reply.facts.band_info = Object.fromEntries(
      unique(g.facts.map((f) => String(f.band))).map((b) => {
        const e = ctx.registry.bands.get(b);
        return [b, e ? { title: e.title, unit: e.unit, tempo: e.tempo, cadence_s: e.cadence_s, provenance_class: e.provenance_class, source: e.source, description: e.description } : null];
      }),
    );
    return reply;
  }
  return fitReply(reply as unknown as Record<string, unknown>, r.matched_topics) as unknown as AskResponse;
}

/** The window as tslot ranges, per tempo of the topic's bands ("in 2021" → medium 657..669). */
function tslotsOf(ctx: ServiceContext, topic: TopicEntry | undefined, time: TimeWindow): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const b of topic?.bands ?? []) {
    const tempo = ctx.registry.bands.get(b)?.tempo;
    if (tempo && tempo !== 'static' && !out[tempo]) out[tempo] = [tslotOf(time.start_unix, tempo), tslotOf(time.end_unix, tempo)];
  }
  return out;
}

function compose(
  ctx: ServiceContext,
  u: Understanding,
  r: RouteResult,
  topic: TopicEntry | undefined,
  place: AskPlace,
  placeError: string | undefined,
  g: Gathered,
  algorithms: AlgorithmForQuestion[],
  missing: string[],
  corpus: Awaited<ReturnType<typeof readCorpus>> | undefined,
  attestedHere: string[],
  loc: LocateResp | null,
  huntRun: HuntResult | undefined,
  plan: CompositePlan | null,
): Composed {
  const reg = ctx.registry;
  switch (r.intent) {
    case 'out_of_scope':
      return outOfScopeAnswer(reg, r, loc);
    case 'corpus':
      return corpusAnswer(reg, corpus!.stats, topic, corpus!.availability, loc, attestedHere);
    case 'similar':
      return similarAnswer(loc, placeError, g.embeddings);
    case 'change':
      return changeAnswer(reg, loc, placeError, g.embeddings, g.facts, u.time);
    case 'hunt': {
      const h = r.hunt!;
      if (huntRun) return huntResultAnswer(huntRun, h.term, place.query ?? loc?.label);
      return huntAnswer(
        h.event,
        h.term,
        place.query ?? loc?.label,
        h.algorithm,
        reg.notYetImplemented.get(h.event),
        loc ? Math.min(16, loc.polygon_sample_cells.length > 1 ? loc.polygon_sample_cells.length : 9) : 0,
      );
    }
    default:
      return topicalAnswer({
        reg,
        topic: topic!,
        loc,
        query: place.query,
        placeError,
        facts: g.facts,
        missing,
        notes: g.notes,
        algorithms,
        time: u.time,
        timeMode: g.timeMode,
        routing: r,
        extent: loc !== null && hasExtent(loc),
        plan,
      });
  }
}

export { ASK_REPLY_CAP_BYTES };

/**
 * A hunt question over a place with extent runs the hunt itself (over the place's box): its
 * hotspots answer the question, and every cell and fact_cid it read joins the ask receipt. An
 * event without an algorithm (oil slick) keeps the plain answer and its workaround.
 */
async function runHunt(ctx: ServiceContext, event: string, loc: LocateResp, deadline: number, g: Gathered): Promise<HuntResult | undefined> {
  const full = loc.polygon_bbox!;
  let box = { min_lat: full.min_lat, min_lng: full.min_lng, max_lat: full.max_lat, max_lng: full.max_lng };
  // A place larger than the hunt's cap (a country) is hunted over its central part, and said so.
  const km2 = boxAreaKm2(box);
  if (km2 > HUNT_MAX_AREA_KM2 * 0.98) {
    const f = Math.sqrt((HUNT_MAX_AREA_KM2 * 0.95) / km2);
    const c = boxCentre(box);
    const halfLat = ((box.max_lat - box.min_lat) * f) / 2;
    const halfLng = (boxWidth(box) * f) / 2;
    box = { min_lat: c.lat - halfLat, max_lat: c.lat + halfLat, min_lng: c.lng - halfLng, max_lng: c.lng + halfLng };
    g.caveats.push(
      `${loc.label} is larger than a hunt covers (${HUNT_MAX_AREA_KM2.toLocaleString('en-US')} km² of box): only its central ${Math.round(f * f * 100)} % was sampled; hunt its parts for the rest.`,
    );
  }
  try {
    const h = await hunt(ctx, { event, polygon_bbox: box }, { deadline });
    g.extraCells.push(...h.receipt.cells);
    g.extraCids.push(...h.receipt.fact_cids);
    g.notes.push(...h.materialize_notes);
    g.caveats.push(...h.caveats);
    return h;
  } catch (err) {
    if (err instanceof SvcError && (err.code === 'not_yet_implemented' || err.code === 'invalid_argument')) return undefined;
    throw err;
  }
}
