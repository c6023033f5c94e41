/**
 * Rasters over the API (docs/rasters.md): band_raster (one Sentinel-2 band over a box as a
 * float32 grid artifact with a signed derivation record) and raster_resolve (a raster token back
 * to its record and artifact, rebuilding an evicted artifact), both operations of the table and
 * MCP tools in /mcp/full; and GET /v1/artifacts/<cid>, a plain binary route (bytes, immutable
 * caching, ETag, ranges), registered by `artifactRoutes`.
 */
import type {} from '@fastify/swagger';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../../primitives/context/context.js';
import { bandRaster } from '../../primitives/rasters/band-raster.js';
import { artifactBytes, storedArtifact } from '../../primitives/rasters/artifacts.js';
import { MAX_ANCHORS } from '../../primitives/rasters/geometry.js';
import { GRID_MEDIA_TYPE } from '../../primitives/rasters/grid-format.js';
import { MAX_PIXELS_PER_SIDE, RASTER_BANDS } from '../../primitives/rasters/recipe.js';
import { resolveRaster } from '../../primitives/rasters/resolve.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf } from '../schemas/inputs.js';
import { Closed, Nullable, ServedFact, Signed } from '../schemas/responses.js';

export const Box = Closed(
  {
    min_lat: Type.Number({ minimum: -90, maximum: 90 }),
    min_lng: Type.Number({ minimum: -180, maximum: 180 }),
    max_lat: Type.Number({ minimum: -90, maximum: 90 }),
    max_lng: Type.Number({ minimum: -180, maximum: 180 }),
  },
  'a lat/lng box (WGS 84 degrees); kept to 7 decimals (the canonical box)',
);
export const Geotransform = Type.Array(Type.Number(), {
  minItems: 6,
  maxItems: 6,
  description: "GDAL order: [x of the top-left corner, pixel width, 0, y of the top-left corner, 0, -pixel height], in the EPSG code's units (metres)",
});
const PixelWindow = Closed({ col0: Type.Integer(), row0: Type.Integer(), width: Type.Integer({ minimum: 1 }), height: Type.Integer({ minimum: 1 }) });
export const RasterToken = Type.String({ minLength: 10, maxLength: 400, description: 'svc:raster:<aoi_cid>:<band>:<tslot>:<derivation_cid>' });
export const b32 = Type.String({ pattern: '^[a-z2-7]+$' });

const RasterAnswer = Signed({
  status: Type.Literal('raster'),
  token: RasterToken,
  aoi_cid: Type.String({ description: '26-character anchor of the canonical box' }),
  band: Type.String(),
  tslot: Type.Integer({ minimum: 0, description: "the band's tslot of the capture time" }),
  derivation_cid: b32,
  record: Type.String({ description: 'the signed derivation record as an svc:fact: handle (/v1/memory_token/resolve, /v1/fetch with derivation_cid)' }),
  artifact_cid: b32,
  artifact_url: Type.String({ description: 'GET it (relative to this responder)' }),
  media_type: Type.Literal(GRID_MEDIA_TYPE),
  bytes: Type.Integer(),
  width: Type.Integer({ minimum: 1, maximum: MAX_PIXELS_PER_SIDE }),
  height: Type.Integer({ minimum: 1, maximum: MAX_PIXELS_PER_SIDE }),
  epsg: Type.Integer(),
  geotransform: Geotransform,
  pixel_size_m: Type.Number(),
  nodata: Type.Literal('NaN'),
  bbox: Box,
  scene: Closed({
    id: Type.String(),
    captured_at: Type.String(),
    cloud_cover: Nullable(Type.Number()),
    asset: Type.String(),
    href: Type.String(),
  }),
  cells: Closed(
    {
      cells_in_box: Type.Integer({ minimum: 0, description: "cells of the service's grid whose centres lie in the box" }),
      stride: Closed({ lat: Type.Integer({ minimum: 1 }), lng: Type.Integer({ minimum: 1 }) }),
      listed: Type.Array(Closed({ cell: Type.String(), window: PixelWindow }), { maxItems: MAX_ANCHORS }),
      truncated: Type.Boolean(),
    },
    'best-effort cell anchors: computed, never materialized',
  ),
});

const AbsenceAnswer = Signed({
  status: Type.Literal('absence'),
  aoi_cid: Type.String(),
  band: Type.String(),
  bbox: Box,
  absence: Closed({
    reason: OneOf(['outside_coverage', 'no_scene_near_date', 'no_data'] as const),
    detail: Type.String(),
    searched: Type.Optional(Closed({ from: Type.String(), to: Type.String() })),
    scene: Type.Optional(Type.String()),
  }),
});

/** A band_raster request (also a raster_bundle item). */
export const BandRasterInput = Type.Object(
  {
    bbox: Box,
    band: OneOf(RASTER_BANDS),
    observed_on: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD: choose the scene near this day' })),
  },
  { additionalProperties: false },
);

export const bandRasterOp = defineOperation({
  name: 'band_raster',
  method: 'POST',
  path: '/v1/band_raster',
  summary: "One Sentinel-2 band over a box as a float32 grid artifact in the scene's own UTM grid, with a signed derivation record and an svc:raster: token",
  description:
    `Use for the pixels of an area, not one cell. Input {bbox {min_lat, min_lng, max_lat, max_lng}, band (${RASTER_BANDS.join(', ')}), observed_on? (YYYY-MM-DD; default today)}. ` +
    "The scene is the least cloudy Sentinel-2 L2A scene within 15 days of the date (then 45) whose footprint covers the whole box; only the COG blocks covering the box are read, at native resolution in the scene's UTM grid (no resampling); reflectance = DN × scale + offset of the asset. " +
    `At most ${MAX_PIXELS_PER_SIDE} pixels per side (5.12 km at 10 m, 10.24 km for B11/B12 at 20 m): larger boxes are 422 invalid_argument naming the cap band_raster.max_pixels_per_side. ` +
    'Answer {status: raster, token (svc:raster:…; resolve with POST /v1/raster/resolve), record (svc:fact: handle of the signed derivation record), derivation_cid, artifact_cid, artifact_url (GET: the grid file application/x.svc-grid-f32.v1, layout in docs/rasters.md), width, height, epsg, geotransform, pixel_size_m, scene, cells (cell anchors with their pixel windows), receipt (its field segment binds aoi_cid and derivation_cid)}, ' +
    'or {status: absence, absence {reason: outside_coverage | no_scene_near_date | no_data, detail}} when there is nothing to make: never a grid of zeros. The same box and band asked again answer the same token.',
  tags: ['read'],
  input: BandRasterInput,
  output: Type.Union([RasterAnswer, AbsenceAnswer]),
  mcp: 'full',
  run: (ctx, input, call) => bandRaster(ctx, input, call),
});

export const rasterResolveOp = defineOperation({
  name: 'raster_resolve',
  method: 'POST',
  path: '/v1/raster/resolve',
  summary: 'An svc:raster: token to its signed derivation record and artifact; an evicted artifact is rebuilt from the record, byte for byte',
  description:
    'Answer {token, aoi_cid, band, tslot, derivation_cid, record (the signed record, with its own receipt), artifact {cid, media_type, bytes, url, state: stored | rebuilt}, receipt (field segment: aoi_cid, derivation_cid)}. ' +
    'An artifact evicted from the store (SVC_ARTIFACT_MAX_BYTES) is read again from the same asset file and window and stored (state rebuilt); if the upstream file no longer gives the signed bytes: source_format_mismatch, nothing stored. ' +
    'Unknown record: cid_not_found; a token whose area, band or tslot differs from the record: token_claim_mismatch.',
  tags: ['read'],
  input: Type.Object({ token: RasterToken }, { additionalProperties: false }),
  output: Signed({
    token: RasterToken,
    aoi_cid: Type.String(),
    band: Type.String(),
    tslot: Type.Integer(),
    derivation_cid: b32,
    record: ServedFact,
    artifact: Closed({ cid: b32, media_type: Type.String(), bytes: Type.Integer(), url: Type.String(), state: OneOf(['stored', 'rebuilt'] as const) }),
  }),
  mcp: 'full',
  run: (ctx, input, call) => resolveRaster(ctx, input, call),
});

export const RASTER_OPS: Operation[] = [bandRasterOp, rasterResolveOp];

/** Cache-Control of an artifact: its bytes never change under its cid. */
export const ARTIFACT_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** Whether an If-None-Match value names the artifact's ETag (or is `*`). */
function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const list = (Array.isArray(header) ? header.join(',') : header).split(',').map((s) => s.trim().replace(/^W\//, ''));
  return list.includes(etag) || list.includes('*');
}

/**
 * The one byte range a Range header asks for within `size` bytes: null to serve the whole
 * (no header, another unit, several ranges, a malformed value: RFC 9110 §14.2 lets a server
 * ignore it), 'unsatisfiable' for a range wholly past the end.
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return null;
  if (start >= size) return 'unsatisfiable';
  if (end < start) return null;
  return { start, end: Math.min(end, size - 1) };
}

/** GET /v1/artifacts/:cid (HEAD too): the artifact's bytes as stored, never re-encoded. */
export async function artifactRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/artifacts/:cid',
    {
      schema: {
        summary: 'An artifact\'s bytes (a band_raster grid): immutable, ETag = "<cid>", byte ranges',
        description: `Content-Type is the artifact's media type (${GRID_MEDIA_TYPE} for grids, docs/rasters.md); Cache-Control ${ARTIFACT_CACHE_CONTROL}; ETag "<cid>" (If-None-Match: 304); Range bytes=a-b, a- or -n: 206 with Content-Range, past the end 416. The cid is b32 of the BLAKE3 of the bytes: check it. Unknown or evicted: 404 artifact_not_found, whose details.rebuild is the resolve call that makes it again.`,
        tags: ['read'],
        params: { type: 'object', required: ['cid'], properties: { cid: { type: 'string', minLength: 1, maxLength: 64 } } },
        response: { 200: { description: 'the artifact bytes', type: 'string' }, 206: { description: 'the asked byte range', type: 'string' } },
      },
    },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const cid = (req.params as { cid: string }).cid;
      const info = await storedArtifact(ctx, cid);
      const etag = `"${cid}"`;
      reply.header('ETag', etag).header('Cache-Control', ARTIFACT_CACHE_CONTROL).header('Accept-Ranges', 'bytes');
      if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
      // If-Range with another validator: the client's part is stale, so the whole is sent.
      const ifRange = req.headers['if-range'];
      const rangeHeader = ifRange === undefined || String(ifRange).trim().replace(/^W\//, '') === etag ? req.headers.range : undefined;
      const range = byteRange(rangeHeader, info.size);
      if (range === 'unsatisfiable') {
        reply.header('Content-Range', `bytes */${info.size}`);
        throw new SvcError('invalid_argument', `range: ${rangeHeader} lies past the end of the ${info.size}-byte artifact`, { field: 'range', size: info.size }, { status: 416 });
      }
      const got = await artifactBytes(ctx, cid, range ?? undefined);
      reply.type(got.media_type).header('X-Content-Type-Options', 'nosniff');
      if (range) reply.code(206).header('Content-Range', `bytes ${range.start}-${range.start + got.bytes.length - 1}/${got.size}`);
      return reply.send(Buffer.from(got.bytes.buffer, got.bytes.byteOffset, got.bytes.byteLength));
    },
  );
}
