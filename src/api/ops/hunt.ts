/** POST /v1/hunt (docs/hunt.md): the hunt primitive, in the core MCP set as svc_hunt. */
import { loadRegistry } from '../../registry/registry.js';
import { hunt } from '../../primitives/hunt/hunt.js';
import type { Operation } from '../operations.js';

const events = loadRegistry().huntEventList;

export const huntOp: Operation = {
  name: 'hunt',
  method: 'POST',
  path: '/v1/hunt',
  summary: 'Where in a region is an event happening: sample up to 32 cells, rank by the algorithm\'s primary band, top 8 signed hotspots',
  description: `event: ${events.map((e) => e.event).join(', ')} (case-insensitive; aliases such as ${events.slice(0, 4).map((e) => e.aliases[0]).join(', ')} accepted). Give region (free text, resolved by locate) or polygon_bbox. Every sampled cell is reported in samples[] with its status (value, absence, timeout, gate result); one receipt binds every fact_cid cited. An empty hotspots list carries empty_reason.`,
  tags: ['read'],
  input: {
    type: 'object',
    required: ['event'],
    additionalProperties: false,
    properties: {
      // Not an enum: aliases are case-insensitive, and an unknown event gets the typed refusal listing the events.
      event: { type: 'string', minLength: 1, maxLength: 64, description: 'hunt event or alias (see /v1/hunt description)' },
      region: { type: 'string', minLength: 1, maxLength: 300, description: 'place with extent (lake, county, region), resolved through locate' },
      polygon_bbox: {
        type: 'object', required: ['min_lat', 'min_lng', 'max_lat', 'max_lng'],
        properties: { min_lat: { type: 'number' }, min_lng: { type: 'number' }, max_lat: { type: 'number' }, max_lng: { type: 'number' }, source: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  mcp: 'core',
  run: (ctx, input, call) => hunt(ctx, input, { deadline: call.deadline }),
};
