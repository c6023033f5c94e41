/**
 * `npm run bench [name…]`: runs the named benchmarks (default: protocol) one after another.
 * Options in `--key=value` (or `--flag`) form go to the benchmark named before them, e.g.
 * `npm run bench -- memory-index --notes=1000000 --edges=1000000` (the memory index at a million
 * notes and edges; `bench/memory-index.ts` lists its options).
 */
import { spawnSync } from 'node:child_process';

const runs: Array<{ name: string; args: string[] }> = [];
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith('--') && runs.length > 0) runs[runs.length - 1].args.push(arg);
  else runs.push({ name: arg, args: [] });
}
if (runs.length === 0) runs.push({ name: 'protocol', args: [] });
let failed = 0;
for (const { name, args } of runs) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}.ts`, ...args], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
