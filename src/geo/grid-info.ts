/**
 * GET /v1/grid_info (docs/reads.md, "Discovery and catalogues"): the grid description, with an
 * optional `resolution` query parameter. The lattice has one resolution, so asking for any other is
 * `invalid_resolution` (docs/errors.md) naming the one served, rather than silently describing a
 * grid the caller did not ask for.
 */
import { gridInfo } from '../protocol/cell64.js';
import { SvcError } from '../protocol/errors.js';

/** Query string of the route. Text, so that every unexpected value gets the one typed answer. */
export const GRID_INFO_QUERY = {
  type: 'object',
  properties: {
    resolution: { type: 'string', maxLength: 32, description: 'optional; must be the served resolution (listed in `resolutions`)' },
  },
} as const;

/** The grid description, after checking the requested resolution against the served ones. */
export function gridInfoFor(query: { resolution?: string } = {}): ReturnType<typeof gridInfo> {
  const info = gridInfo();
  const asked = query.resolution;
  if (asked === undefined) return info;
  const n = /^\s*[+-]?\d+\s*$/.test(asked) ? Number(asked) : NaN;
  if (!(info.resolutions as readonly number[]).includes(n)) {
    throw new SvcError('invalid_resolution', `resolution: ${JSON.stringify(asked)} is not served; this responder serves resolution ${info.resolutions.join(', ')} only`, {
      field: 'resolution',
      requested: asked,
      served: info.resolution,
      resolutions: info.resolutions,
    });
  }
  return info;
}
