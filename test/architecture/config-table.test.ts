/** The README's configuration table is the one generated from the declaration in src/config.ts. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { README, currentConfigTable, renderConfigTable } from '../../scripts/config-table.js';
import { CONFIG_VARS } from '../../src/config.js';

describe('README configuration table', () => {
  it('matches the declaration', () => {
    const table = currentConfigTable(readFileSync(README, 'utf8'));
    assert.ok(table !== undefined, 'README.md has no config-table markers: run `npm run docs:config`');
    assert.equal(table, renderConfigTable(), 'README.md configuration table differs from src/config.ts: run `npm run docs:config`');
  });

  it('declares every variable once', () => {
    const names = CONFIG_VARS.map((v) => v.name);
    assert.deepEqual(
      names.filter((n, i) => names.indexOf(n) !== i),
      [],
    );
    for (const n of ['PORT', 'SVC_HOST', 'SVC_DATABASE_SCHEMA', 'SVC_LOG_LEVEL', 'SVC_SEGMENT_MAX_BYTES', 'SVC_ATTESTER_DAILY_FACTS']) assert.ok(names.includes(n), n);
  });
});
