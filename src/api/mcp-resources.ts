/**
 * MCP resources (docs/reads.md, "MCP"): the catalogues a model or a host reads before calling
 * tools, on both endpoints. Each is the document its REST route serves (catalogues.ts builds both),
 * as JSON; the agent quickref is Markdown (the initialize instructions and the intent table).
 * URIs are `<prefix>://catalogue/<name>` and `<prefix>://agent/quickref`.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceContext } from '../primitives/context/context.js';
import { algorithmsDocument, bandsDocument, limitsDocument, quickrefMarkdown, sourcesDocument, topicsDocument } from './catalogues.js';
import { toJson } from './json.js';
import { unknownResource } from './mcp-errors.js';

interface CatalogueResource {
  /** The last part of the URI. */
  key: string;
  title: string;
  description: string;
  /** The REST route serving the same document. */
  rest: string;
  read: (ctx: ServiceContext) => unknown;
}

const CATALOGUES: CatalogueResource[] = [
  {
    key: 'bands',
    title: 'Band registry',
    description: 'Every band key (namespace.name) with tempo, unit, privacy class and source, and the cube layout of state {view: "cube"}: the band keys recall and the other reads take.',
    rest: 'GET /v1/bands',
    read: bandsDocument,
  },
  { key: 'topics', title: 'Topics', description: 'The declared topics, each with its bands and algorithms (what ask routes a question to).', rest: 'GET /v1/topics', read: topicsDocument },
  {
    key: 'algorithms',
    title: 'Algorithm catalogue',
    description: 'Every algorithm with its formula, input bands and output (hunt events rank on their primary band).',
    rest: 'GET /v1/algorithms',
    read: algorithmsDocument,
  },
  { key: 'sources', title: 'Upstream sources', description: 'The upstream data sources with licence, attribution and the URL configured here.', rest: 'GET /v1/sources', read: sourcesDocument },
  {
    key: 'limits',
    title: 'Limits in force',
    description: 'Request bounds, rate limit, gateway timeout, quotas and configuration of this responder.',
    rest: 'GET /v1/limits',
    read: limitsDocument,
  },
];

export interface ResourceOptions {
  prefix: string;
  /** The initialize instructions, the head of the quickref. */
  instructions: string;
  /** The endpoint path, for error envelopes. */
  path: string;
}

/** The URIs of the resources (tests and docs list them). */
export function resourceUris(prefix: string): string[] {
  return [...CATALOGUES.map((c) => `${prefix}://catalogue/${c.key}`), `${prefix}://agent/quickref`];
}

/** Registers resources/list, resources/read and resources/templates/list (none) on `server`. */
export function registerResources(server: Server, ctx: ServiceContext, o: ResourceOptions): void {
  const quickrefUri = `${o.prefix}://agent/quickref`;
  const list = [
    ...CATALOGUES.map((c) => ({
      uri: `${o.prefix}://catalogue/${c.key}`,
      name: c.key,
      title: c.title,
      description: `${c.description} Same document as ${c.rest}.`,
      mimeType: 'application/json',
    })),
    {
      uri: quickrefUri,
      name: 'quickref',
      title: 'Agent quickref',
      description: 'How to use the tools: the happy path (locate → recall → verify_receipt), failures, and which tool serves which intent. Same intents as GET /v1/agent_quickref.',
      mimeType: 'text/markdown',
    },
  ];
  const uris = list.map((r) => r.uri);
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: list }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri;
    if (uri === quickrefUri) return { contents: [{ uri, mimeType: 'text/markdown', text: quickrefMarkdown(o.prefix, o.instructions) }] };
    const c = CATALOGUES.find((x) => `${o.prefix}://catalogue/${x.key}` === uri);
    if (!c) throw unknownResource(uri, uris, o.path);
    return { contents: [{ uri, mimeType: 'application/json', text: toJson(c.read(ctx)) }] };
  });
}
