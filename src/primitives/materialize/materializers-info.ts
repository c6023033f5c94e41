/**
 * Introspection of the wiring (docs/reads.md, "Discovery and catalogues"): which connectors are
 * wired, for which bands, with or without history (`GET /v1/materializers`), and per band how far
 * back data can be had (`GET /v1/data_availability`). Both read `ctx.materializers`, so they say
 * what recall and backfill will actually do.
 */
import { TEMPO_UNIT_S } from '../../protocol/tslot.js';
import { sourceBaseUrl } from '../../sources/index.js';
import type { ServiceContext } from '../context/context.js';

/** Host (and port) of a registry source's configured base URL; null for a key outside the registry. */
function hostOf(ctx: ServiceContext, key: string): string | null {
  if (!ctx.registry.sources.has(key)) return null;
  try {
    return new URL(sourceBaseUrl(ctx.config, ctx.registry, key)).host;
  } catch {
    return null;
  }
}

/** GET /v1/materializers: every wired connector, and for every registry band whether one serves it. */
export function materializersInfo(ctx: ServiceContext) {
  const timeout = ctx.config.materializerTimeoutSecs;
  const list = ctx.materializers.list();
  const bands = ctx.registry.bandList.map((b) => {
    const m = ctx.materializers.forBand(b.key);
    return { band: b.key, source: b.source, wired: m !== undefined, materializer: m?.key ?? null, history: m?.history ?? false };
  });
  return {
    schema: `${ctx.config.prefix}.materializers.v1`,
    materializer_timeout_s: timeout,
    materializers: list.map((m) => ({
      key: m.key,
      bands: [...m.bands],
      // Bands this connector is the first choice for (an earlier connector may own the others).
      serves: m.bands.filter((b) => ctx.materializers.forBand(b) === m),
      history: m.history,
      base_url_host: hostOf(ctx, m.key),
      timeout_s: timeout,
    })),
    bands,
    counts: { bands: bands.length, wired: bands.filter((b) => b.wired).length, with_history: bands.filter((b) => b.history).length },
  };
}

/** GET /v1/data_availability: per band, the span that can be served and at what tempo. */
export function dataAvailability(ctx: ServiceContext) {
  return {
    schema: `${ctx.config.prefix}.data_availability.v1`,
    bands: ctx.registry.bandList.map((b) => {
      const m = ctx.materializers.forBand(b.key);
      const history = m?.history ?? false;
      return {
        band: b.key,
        tempo: b.tempo,
        tempo_seconds: TEMPO_UNIT_S[b.tempo],
        cadence_s: b.cadence_s,
        materializer: m?.key ?? null,
        history,
        // Past slots can be fetched only through a connector with history; otherwise only what is stored.
        history_available_from_unix: history ? b.history_from_unix : null,
        history_available_to_unix: history ? b.history_to_unix : null,
        source_history_from_unix: b.history_from_unix,
        source_history_to_unix: b.history_to_unix,
      };
    }),
  };
}
