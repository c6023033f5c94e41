// Child process for the disk-log crash tests: appends, reports every acknowledged index on
// stdout (synchronously, so nothing is lost in a buffer), then dies by SIGKILL.
// Usage: crash-child.ts <dir> <count> <concurrency> <killAfterMs|-> [checkpointEvery]
// (killAfterMs counts from the first acknowledged append; '-': after the last one)
import { writeSync } from 'node:fs';
import { encodeCanonical } from '../../../src/protocol/cbor.js';
import { portableEd25519 } from '../../../src/protocol/ed25519.js';
import { openDiskLog } from '../../../src/store/log/disk-log.js';

const [dir, countArg, concArg, killArg, ckArg] = process.argv.slice(2);
const seed = new Uint8Array(32).fill(9);
const log = await openDiskLog({
  dir,
  signer: { publicKey: portableEd25519.publicKey(seed), epoch: 0, sign: (d) => portableEd25519.sign(d, seed) },
  segmentMaxBytes: 4096,
  checkpointEvery: ckArg ? Number(ckArg) : undefined,
});
writeSync(1, `open ${await log.size()}\n`);
// The kill timer starts at the first acknowledgement, not at open: on a loaded machine the first
// append can take longer than the delay, and a child killed before any ack tests nothing.
let armed = killArg === '-';
let next = 0;
const count = Number(countArg);
async function worker(): Promise<void> {
  while (next < count) {
    const k = next++;
    const entry = encodeCanonical({ k, pid: process.pid, pad: 'p'.repeat(k % 50) });
    const index = await log.append(entry);
    writeSync(1, `ack ${index} ${Buffer.from(entry).toString('hex')}\n`);
    if (!armed) {
      armed = true;
      setTimeout(() => process.kill(process.pid, 'SIGKILL'), Number(killArg));
    }
  }
}
await Promise.all(Array.from({ length: Number(concArg) }, worker));
process.kill(process.pid, 'SIGKILL');
