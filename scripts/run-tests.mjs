// Runs every test file under test/ with node's test runner (Node 20 has no .ts glob of its own),
// then, when a PostgreSQL server is configured, the route and MCP suites again over PostgreSQL
// (SVC_TEST_DRIVER=postgres: test/support/app.ts builds each responder on a fresh schema).
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
// A test that hangs fails by name after this long instead of holding the whole run (a slow test
// on a saturated machine takes a few minutes at most).
const perTestMs = process.env.SVC_TEST_TIMEOUT_MS ?? '600000';

function run(list, env) {
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${conc}`, `--test-timeout=${perTestMs}`, '--test-reporter=spec', ...list], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return { status: r.status ?? 1, secs: (Date.now() - started) / 1000 };
}

/** Drops the schemas route suites leave on PostgreSQL (restart tests keep theirs until here). */
function dropRouteSchemas() {
  const sql = `DO $$ DECLARE s text; BEGIN FOR s IN SELECT nspname FROM pg_namespace WHERE nspname LIKE 'tr\\_%' LOOP EXECUTE format('DROP SCHEMA %I CASCADE', s); END LOOP; END $$;`;
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import pg from 'pg'; const c = new pg.Client({ connectionString: process.env.SVC_TEST_DATABASE_URL }); await c.connect(); await c.query(${JSON.stringify(sql)}); await c.end();`,
    ],
    { stdio: 'inherit' },
  );
  return r.status === 0;
}

const started = Date.now();
const all = run(files, {});
console.log(`test wall time (all suites, ${process.env.SVC_TEST_DRIVER ?? 'sqlite'} routes): ${all.secs.toFixed(0)} s for ${files.length} files`);
let status = all.status;
// The route and MCP suites once more over PostgreSQL, when a server is configured.
// A file that builds its own PostgreSQL + Redis deployment for every test already ran it in the first pass.
const OWN_POSTGRES = ['deployment-postgres-redis.test.ts'];
const routeFiles = files.filter((f) => /^test[\\/](routes|mcp)[\\/]/.test(f) && !OWN_POSTGRES.some((n) => f.endsWith(n)));
if (process.env.SVC_TEST_DATABASE_URL && process.env.SVC_TEST_DRIVER !== 'postgres' && routeFiles.length > 0) {
  dropRouteSchemas();
  const pgRun = run(routeFiles, { SVC_TEST_DRIVER: 'postgres' });
  console.log(`test wall time (route and MCP suites over PostgreSQL): ${pgRun.secs.toFixed(0)} s for ${routeFiles.length} files`);
  if (!dropRouteSchemas()) console.log('note: could not drop the tr_* schemas the route suites left');
  if (pgRun.status !== 0) status = pgRun.status;
} else if (routeFiles.length > 0) {
  console.log('route suites over PostgreSQL: skipped (SVC_TEST_DATABASE_URL not set)');
}
// The whole run's wall time, so a slow suite shows in every CI log (it must stay well under 30 min).
console.log(`test wall time: ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(status);
