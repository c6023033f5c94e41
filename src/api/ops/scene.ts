/**
 * The cell's true-colour thumbnail (docs/reads.md, "Single-cell reads"): the JSON operation
 * cell_scene_rgb for REST and MCP (the PNG as base64), and the same primitive behind GET
 * /v1/cells/:cell64/scene.png (registered with the other path-parameter routes in reads-more.ts).
 */
import { Type } from '@sinclair/typebox';
import { cellSceneRgb, type SceneThumbnail } from '../../primitives/pictures/scene.js';
import { invalidArgument } from '../../protocol/errors.js';
import { toJson } from '../json.js';
import { defineOperation, type Operation } from '../operations.js';
import { Closed, Nullable } from '../schemas/responses.js';

const cell64Schema = Type.String({ minLength: 1, maxLength: 64, description: 'cell64 (e.g. defi.zb64a.cike.zfa2f)' });

/** The cell named by `cell` or its older name `cell64` (one of them, or both alike). */
function cellOfInput(input: { cell?: string; cell64?: string }): string {
  const cell = input.cell ?? input.cell64;
  if (cell === undefined) throw invalidArgument('cell', 'expected the cell64 of the cell to picture');
  if (input.cell !== undefined && input.cell64 !== undefined && input.cell !== input.cell64) throw invalidArgument('cell64', 'cell and cell64 name different cells: give one');
  return cell;
}

/** Where the same picture is served as a PNG. */
export const scenePngPath = (cell: string) => `/v1/cells/${encodeURIComponent(cell)}/scene.png`;

export const SCENE_SUMMARY = '256 x 256 PNG true-colour thumbnail of a cell from its Sentinel-2 L2A scene';
export const SCENE_DESCRIPTION =
  "Red, green and blue (B04, B03, B02) of the scene the cell's Sentinel-2 point values come from (the newest scene of the current 30-day tslot whose scene classification is clear at the cell centre, widening cloud and lookback like recall), " +
  "read from the scene's 10 m UTM grid around the cell centre without resampling (north-up in UTM, 2.56 km across). " +
  'Reflectance 0..0.3 is stretched linearly to 0..255 with gamma 1/2.2 and clamped; pixels without data are black. ' +
  'No scene over the cell: cid_not_found with details.reason outside_coverage or no_clear_scene (details.detail says why). Upstream failure: source_fetch_failed; deadline: compute_timeout.';

/** Headers of the PNG naming the scene it was drawn from. */
export const SCENE_HEADERS = { id: 'X-Scene-Id', datetime: 'X-Scene-Datetime', cloudCover: 'X-Scene-Cloud-Cover', epsg: 'X-Scene-Epsg' } as const;

/** The JSON answer of cell_scene_rgb. */
export function sceneJson(t: SceneThumbnail) {
  return {
    cell: t.cell,
    width: t.width,
    height: t.height,
    media_type: 'image/png',
    png_base64: t.png.toString('base64'),
    scene: t.scene,
    url: scenePngPath(t.cell),
  };
}

/** The scene a thumbnail was drawn from. */
const SceneInfo = Closed({
  id: Type.String({ description: 'the Sentinel-2 item id' }),
  datetime: Type.String({ description: 'capture time, ISO 8601 UTC' }),
  cloud_cover: Nullable(Type.Number({ description: 'eo:cloud_cover of the whole item (%)' })),
  epsg: Nullable(Type.Integer({ description: "CRS of the scene's UTM grid" })),
});

export const cellSceneRgbOp = defineOperation({
  name: 'cell_scene_rgb',
  method: 'POST',
  path: '/v1/cell_scene_rgb',
  summary: SCENE_SUMMARY,
  description: `${SCENE_DESCRIPTION} Response {cell, width, height, media_type: image/png, png_base64, scene: {id, datetime, cloud_cover, epsg}, url (the same PNG at GET /v1/cells/<cell>/scene.png)}.`,
  tags: ['read'],
  // `cell` is the name every other tool uses; `cell64` stays for callers written against it.
  input: Type.Object({ cell: Type.Optional(cell64Schema), cell64: Type.Optional(cell64Schema) }, { additionalProperties: false, description: 'give cell (or its older name cell64)' }),
  output: Closed({
    cell: Type.String(),
    width: Type.Integer(),
    height: Type.Integer(),
    media_type: Type.Literal('image/png'),
    png_base64: Type.String({ description: 'the PNG, base64 (over MCP: an image block instead)' }),
    scene: SceneInfo,
    url: Type.String({ description: 'the same PNG at GET /v1/cells/<cell>/scene.png' }),
  }),
  mcp: 'full',
  run: async (ctx, input, call) => sceneJson(await cellSceneRgb(ctx, { cell64: cellOfInput(input) }, { deadline: call.deadline })),
  // Over MCP the picture is an image block (agents that see images get it as one); the
  // structured part and its text carry everything else, without the base64 a second time.
  mcpResult: (r: ReturnType<typeof sceneJson>) => {
    const { png_base64: data, ...rest } = r;
    return {
      structuredContent: rest,
      content: [
        { type: 'image', data, mimeType: 'image/png' },
        { type: 'text', text: toJson(rest) },
      ],
    };
  },
});

/**
 * The same operation answering the thumbnail itself, for GET /v1/cells/:cell64/scene.png: run
 * through the operation runner, it keeps the gateway deadline and the cell_scene_rgb metrics.
 */
export const scenePngOp = defineOperation({
  ...cellSceneRgbOp,
  // Not in the table: its answer goes out as image/png (cellRoutes), never as checked JSON.
  output: Type.Unknown({ description: 'the thumbnail: PNG bytes and the scene they were drawn from' }),
  run: (ctx, input, call) => cellSceneRgb(ctx, { cell64: cellOfInput(input) }, { deadline: call.deadline }),
});

export const SCENE_OPS: readonly Operation[] = [cellSceneRgbOp];
