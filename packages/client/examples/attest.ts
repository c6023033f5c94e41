/**
 * Write facts with an attester key and read one back: `client.attest` builds the canonical batch
 * (fact digests, batch root, Ed25519 over blake3(batch_root ‖ registry_cid ‖ schema_cid)), posts
 * it, verifies the receipt and checks the answer lists exactly the fact_cids signed here.
 *
 *   SVC_URL=http://127.0.0.1:8080 SVC_KEY_FILE=attester-key.json npx tsx packages/client/examples/attest.ts
 */
import { protocol, SvcClient } from '../src/index.js';
import { type ExampleEnv, runIfMain } from './env.js';

export interface AttestExample extends Partial<ExampleEnv> {
  url: string;
  /** Where to write (default: a cell in Utrecht). */
  cell?: string;
  log?: (line: string) => void;
}

export async function main({ url, publicKey, key, cell = protocol.cellOf(52.1, 5.1), log = console.log }: AttestExample) {
  if (!key) throw new Error('an attester key is needed (SVC_KEY_FILE)');
  const client = new SvcClient({ url, publicKey });
  const signed_at = protocol.signedAtText(new Date());
  const facts = [
    { kind: 'primary', cell, band: 'weather.temperature_2m', value: 12.5, unit: 'degC', signed_at },
    { kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 3, unit: 'm_msl', signed_at },
  ];
  const written = await client.attest(facts, { key });
  log(`accepted ${written.fact_cids.length} fact(s) at log index ${written.log_index} (batch root ${written.batch_root}); receipt verified`);
  for (const [i, cid] of written.fact_cids.entries()) log(`  ${cid}  ${String(facts[i].band)} @ ${cell}`);

  // Read the first one back by fact_cid: the answer is verified before it is returned.
  const fetched = await client.fetch({ cid: written.fact_cids[0] });
  const fact = fetched.fact as { fact_cid: string; band: string; value: unknown };
  log(`fetched ${fact.fact_cid}: ${fact.band} = ${JSON.stringify(fact.value)}, verified`);
  return { cell, fact_cids: written.fact_cids, log_index: written.log_index, fetched: fact.fact_cid };
}

runIfMain(import.meta.url, main);
