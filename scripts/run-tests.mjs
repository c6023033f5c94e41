// Runs every test file under test/ with node's test runner (Node 20 has no .ts glob of its own).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function walk(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
const files = walk('test').filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)));
const conc = process.env.SVC_TEST_CONCURRENCY ?? '2';
const started = Date.now();
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${conc}`, '--test-reporter=spec', ...files], { stdio: 'inherit' });
// The whole run's wall time, so a slow suite shows in every CI log (it must stay well under 30 min).
console.log(`test wall time: ${((Date.now() - started) / 1000).toFixed(0)} s for ${files.length} files`);
process.exit(r.status ?? 1);
