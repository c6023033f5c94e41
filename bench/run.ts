/** `npm run bench [name…]`: runs the named benchmarks (default: protocol) one after another. */
import { spawnSync } from 'node:child_process';

const names = process.argv.slice(2);
const list = names.length > 0 ? names : ['protocol'];
let failed = 0;
for (const name of list) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
