/**
 * Agent memory in a private scope: write notes as signed memory.note records (filed by the
 * subject rule, like `svc attest`'s {band, value} shorthand), link them with an edge, get a
 * scope bearer (docs/scopes.md) and search the notes back. Without the bearer the scope is
 * refused; a public search does not see them.
 *
 *   SVC_URL=http://127.0.0.1:8080 SVC_KEY_FILE=attester-key.json npx tsx packages/client/examples/private-notes.ts
 */
import { protocol, SvcApiError, SvcClient } from '../src/index.js';
import { type ExampleEnv, runIfMain } from './env.js';

export interface NotesExample extends Partial<ExampleEnv> {
  url: string;
  /** The agent_id of the scope (default: a fresh one). */
  agent?: string;
  log?: (line: string) => void;
}

export async function main({ url, publicKey, key, agent = `agent-${Date.now().toString(36)}`, log = console.log }: NotesExample) {
  if (!key) throw new Error('an attester key is needed (SVC_KEY_FILE)');
  const client = new SvcClient({ url, publicKey });
  const scope = { agent_id: agent };

  const notes = await client.writeNotes(
    [
      { text: 'Irrigation pump at the north field failed; maize wilting', tags: ['pump', 'maize'], cell: protocol.cellOf(52.1, 5.1) },
      { text: 'Replacement pump installed at the north field', tags: ['pump'] },
    ],
    { key, scope },
  );
  log(`wrote ${notes.fact_cids.length} note(s) in ${JSON.stringify(scope)} at log index ${notes.log_index}; receipt verified`);
  const edge = await client.writeEdges([{ type: 'related_to', from: notes.fact_cids[1], to: notes.fact_cids[0], valid_from: protocol.signedAtText(new Date()), reason: 'the fix for the failure' }], {
    key,
    scope,
  });
  log(`linked them: edge ${edge.fact_cids[0]}`);

  try {
    await client.memory_search({ query: 'pump', scope });
    log('without a bearer: answered (unexpected)');
  } catch (e) {
    if (!(e instanceof SvcApiError)) throw e;
    log(`without a bearer: ${e.code} (HTTP ${e.status})`);
  }

  const { bearer, expires_at, binding } = await client.scopeBearer({ scope, key, ttl: 300 });
  log(`bearer for ${JSON.stringify(scope)} (${binding}), expires ${expires_at}`);
  const reader = client.withBearer(bearer);
  const found = await reader.memory_search({ query: 'pump failed', scope });
  log(`search "pump failed": ${found.results.length} note(s), ranking verified`);
  for (const r of found.results) log(`  ${r.score?.toFixed(3) ?? '-'}  ${(r.note as { text: string }).text}`);
  const edges = await reader.edges_recall({ record: notes.fact_cids[0], scope });
  log(`edges of the first note: ${edges.edges.map((x) => `${x.type} from ${x.from}`).join(', ') || 'none'}`);

  const visible = await client.memory_search({ query: 'pump' });
  log(`public search "pump": ${visible.results.length} note(s)`);
  return { scope, notes: notes.fact_cids, found: found.results.map((r) => r.fact_cid), edges: edges.edges.length, public: visible.results.length };
}

runIfMain(import.meta.url, main);
