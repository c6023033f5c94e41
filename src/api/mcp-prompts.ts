/**
 * MCP prompts (docs/reads.md, "MCP"): short templates a host shows its user (a slash command, a
 * menu entry), each leading a model to the right tools in the right order. They run nothing
 * themselves: prompts/get returns one user message naming the calls.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { GetPromptRequestSchema, ListPromptsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { badPrompt } from './mcp-errors.js';

interface PromptArg {
  name: string;
  description: string;
  required: boolean;
}

interface PromptSpec {
  name: string;
  title: string;
  description: string;
  arguments: PromptArg[];
  /** The message text; `t` prefixes a tool name. Arguments are present when required. */
  text: (a: Record<string, string>, t: (name: string) => string, prefix: string) => string;
}

const arg = (name: string, description: string, required = true): PromptArg => ({ name, description, required });

const PROMPTS: PromptSpec[] = [
  {
    name: 'what_is_here',
    title: 'What is at a place',
    description: 'Describe a place from signed Earth-observation facts: resolve it, read its bands, cite what was read.',
    arguments: [arg('place', 'a place name ("Lyon", "Mont Blanc") or "lat, lng"')],
    text: (a, t, p) =>
      [
        `What is at ${a.place}? Answer only from signed facts of the ${p} tools, and cite them.`,
        `1. ${t('locate')} with {"place": ${JSON.stringify(a.place)}} (or {"lat", "lng"} for coordinates). Check selected.is_high_confidence; when it is false, say which candidate you took.`,
        `2. ${t('recall')} with {"cell": <the cell64>, "bands": ["copdem30m.elevation_mean", "landcover.esa_worldcover_2021", "indices.ndvi", "weather.temperature_2m"]}; other band keys are in the ${p}://catalogue/bands resource. For a question in plain words, ${t('ask')} {"q": …} does the routing itself.`,
        '3. Report each value with its unit, time slot and fact_cid. A band listed in materialize_notes was not read: say it is unknown, never zero.',
        `4. Offer to check the answer with ${t('verify_receipt')} (pass the whole recall response).`,
      ].join('\n'),
  },
  {
    name: 'verify_an_answer',
    title: 'Verify an answer',
    description: 'Check a saved response: every receipt signature, every fact recomputed from its body and bound by a receipt.',
    arguments: [arg('response', 'the whole JSON response of a read (or just its receipt)')],
    text: (a, t, p) =>
      [
        `Verify this ${p} response. Call ${t('verify_receipt')} with {"response": <the JSON below>} exactly as given, without editing it.`,
        'Then report: valid (true/false), the signer and whether it is this responder (signer_is_this_responder), and every entry of failures and errors in plain words.',
        'A valid signature proves who signed and that the bytes are unchanged, not that the value is right; say so. Offline, the same check is `npx svc verify response.json --pubkey <key>`.',
        '',
        a.response,
      ].join('\n'),
  },
  {
    name: 'remember_note',
    title: 'Remember a note',
    description: 'Prepare a signed agent note (memory.note): check for a similar note first, then the write, which is REST only.',
    arguments: [arg('text', 'what to remember'), arg('scope', 'optional private scope, e.g. {"agent_id": "a1"} (reading it back needs its bearer)', false)],
    text: (a, t) => {
      const scope = a.scope?.trim() ? a.scope.trim() : undefined;
      return [
        `Remember this note: ${JSON.stringify(a.text)}${scope ? ` in the scope ${scope}` : ' (public)'}.`,
        `1. ${t('memory_search')} with {"query": <its key words>${scope ? `, "scope": ${scope}` : ''}} to see whether a note already says it${scope ? ' (a scope needs its bearer as the Authorization header of the MCP connection)' : ''}.`,
        `2. If the note is about a place, ${t('locate')} it and keep the cell64; if it cites facts, keep their fact_cids.`,
        `3. Notes are signed writes, not MCP tools. Give the user the record body to sign: [{"band": "memory.note", "value": {"text": …, "cell"?: …, "facts"?: […], "tags"?: […]}${scope ? `, "scope": ${scope}` : ''}}], signed with \`npx svc sign --key <agent key file> --url <responder> < bodies.json\` and POSTed to /v1/memory/notes (docs/memory.md). The key must be listed by the operator${scope ? ' and bound to the scope' : ''}.`,
      ].join('\n');
    },
  },
  {
    name: 'compare_places',
    title: 'Compare two places',
    description: 'Compare two places on the bands both carry, from signed facts.',
    arguments: [arg('place_a', 'the first place (name or "lat, lng")'), arg('place_b', 'the second place')],
    text: (a, t) =>
      [
        `Compare ${a.place_a} and ${a.place_b} from signed facts.`,
        `1. ${t('locate')} each place; check selected.is_high_confidence for both.`,
        `2. ${t('recall_many')} with {"cells": [<cell A>, <cell B>], "bands": [the same bands for both, e.g. "copdem30m.elevation_mean", "indices.ndvi", "landcover.esa_worldcover_2021", "weather.temperature_2m"]}, and ${t('compare')} {"a": <cell A>, "b": <cell B>} for the similarity over the bands both carry.`,
        '3. Tabulate the values side by side with units and fact_cids; a band missing at one place is unknown there, not zero.',
      ].join('\n'),
  },
  {
    name: 'find_event',
    title: 'Find an event in a region',
    description: 'Where in a region an event (algal bloom, wildfire, flood, drought …) is happening: a hunt over sampled cells.',
    arguments: [arg('event', 'algal_bloom, wildfire, flood_extent, deforestation, urban_heat_island, drought, … (aliases accepted)'), arg('region', 'a place with extent: a lake, county or region')],
    text: (a, t) =>
      [
        `Where in ${a.region} is there ${a.event}?`,
        `1. ${t('hunt')} with {"event": ${JSON.stringify(a.event)}, "region": ${JSON.stringify(a.region)}}. It samples up to 32 cells and can take several seconds.`,
        '2. Report the hotspots in rank order (lat, lng, value, unit, fact_cid), the threshold the event needs, and how many samples had no value (summary). An empty list comes with empty_reason: report it.',
        '3. When next_steps is not empty, say what it suggests (a retry, a denser hunt over a smaller box).',
      ].join('\n'),
  },
];

/** The prompt names (tests and docs list them). */
export const PROMPT_NAMES = PROMPTS.map((p) => p.name);

/** Registers prompts/list and prompts/get on `server`; `path` is the endpoint, for error envelopes. */
export function registerPrompts(server: Server, prefix: string, path: string): void {
  const t = (name: string) => `${prefix}_${name}`;
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: PROMPTS.map((p) => ({ name: p.name, title: p.title, description: p.description, arguments: p.arguments })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const p = PROMPTS.find((x) => x.name === req.params.name);
    if (!p) throw badPrompt(`unknown prompt ${req.params.name}`, 'name', `Use a name from prompts/list: ${PROMPT_NAMES.join(', ')}.`, path);
    const args = req.params.arguments ?? {};
    for (const a of p.arguments) {
      if (a.required && !args[a.name]?.trim()) throw badPrompt(`${p.name}: missing argument ${a.name}`, `arguments.${a.name}`, `${a.name}: ${a.description}.`, path);
    }
    return { description: p.description, messages: [{ role: 'user' as const, content: { type: 'text' as const, text: p.text(args, t, prefix) } }] };
  });
}
