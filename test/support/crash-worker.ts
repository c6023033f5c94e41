/**
 * Child process for the crash test: opens a full responder on SVC_DATA and writes batches from
 * several concurrent writers through the real write path, printing one line per acknowledged
 * write ("ACK <log_index> <cid> <cid> …") and per served tree head ("STH <size> <root>") with a
 * synchronous write, so every line the parent reads was acknowledged before the kill.
 */
import { writeSync } from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { mintedBody, mintFacts } from '../../src/primitives/write/attest.js';
import { cellOf } from '../../src/protocol/cell64.js';

const service = await openService(loadConfig({ SVC_DATA: process.env.SVC_DATA, SVC_LOG_LEVEL: 'silent' }));
const round = Number(process.env.CRASH_ROUND ?? 0);
writeSync(1, 'READY\n');
let seq = 0;

async function writer(w: number): Promise<never> {
  for (;;) {
    const n = 1 + (seq % 4);
    const bodies = Array.from({ length: n }, () => {
      seq++;
      // The value wraps so it stays a possible air temperature (the registry refuses above 70 degC).
      return mintedBody(service, {
        kind: 'primary',
        cell: cellOf(((round * 7 + w) % 170) - 85 + seq * 1e-4, (seq % 340) - 170),
        band: 'weather.temperature_2m',
        tslot: 20_000,
        value: (seq % 500) / 10,
        unit: 'degC',
        provenance: 'crash-test',
        derivation: { fn: 'attested@1', sources: [`round-${round}`] },
      });
    });
    const r = await mintFacts(service, bodies, 'crash_test');
    writeSync(1, `ACK ${r.log_index} ${r.fact_cids.join(' ')}\n`);
    if (seq % 5 === 0) writeSync(1, `STH ${r.tree_head.tree_size} ${r.tree_head.root}\n`);
  }
}

await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(writer));
