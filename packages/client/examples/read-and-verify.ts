/**
 * Read facts and verify them offline: every answer is checked with the whole-response verifier
 * against the responder key before the call returns (each fact recomputed to its fact_cid and
 * bound by a receipt the key signed). A second identical recall sends If-None-Match; a 304
 * returns the answer already verified.
 *
 *   SVC_URL=http://127.0.0.1:8080 npx tsx packages/client/examples/read-and-verify.ts
 */
import { SvcClient } from '../src/index.js';
import { type ExampleEnv, runIfMain } from './env.js';

export interface ReadExample extends Partial<ExampleEnv> {
  url: string;
  /** A cell64, cell token or place name (default: the cell the attest example writes). */
  cell?: string;
  bands?: string[];
  log?: (line: string) => void;
}

export async function main({ url, publicKey, cell = 'defi.zb650.zc820.ze81b', bands = ['weather.temperature_2m', 'copdem30m.elevation_mean'], log = console.log }: ReadExample) {
  const client = new SvcClient({ url, publicKey });
  const { answer, verdict } = await client.callVerified('recall', { cell, bands });
  const responder = await client.responder();
  log(`recall ${answer.cell}: ${answer.facts.length} fact(s)`);
  for (const f of answer.facts as Array<{ band: string; value: unknown; unit?: string; fact_cid: string }>) log(`  ${f.band} = ${JSON.stringify(f.value)}${f.unit ? ` ${f.unit}` : ''}  ${f.fact_cid}`);
  log(
    `verified: ${verdict?.facts.length ?? 0} fact(s), ${verdict?.receipts.length ?? 0} receipt(s), signed by ${responder.publicKey}${responder.pinned ? ' (pinned)' : ' (from /.well-known/svc.json)'}`,
  );

  const again = await client.callVerified('recall', { cell, bands });
  log(again.cached ? 'again: 304 Not Modified, the verified answer kept from the first call' : 'again: a new answer (the facts changed)');
  return { cell: answer.cell, facts: answer.facts.length, verified: verdict?.facts.length ?? 0, cached: again.cached };
}

runIfMain(import.meta.url, main);
