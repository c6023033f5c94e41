import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

describe('protocol module is browser-safe', () => {
  const dir = new URL('../../src/protocol/', import.meta.url);
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    it(`${name} imports nothing from Node and nothing outside protocol/ but audited primitives`, () => {
      const src = readFileSync(new URL(name, dir), 'utf8');
      const imports = [...src.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
      for (const spec of imports) {
        assert.ok(!spec.startsWith('node:') && !['fs', 'path', 'crypto', 'buffer'].includes(spec), `${name} imports ${spec}`);
        assert.ok(spec.startsWith('./') || spec.startsWith('@noble/') || spec.startsWith('@scure/'), `${name} imports ${spec}`);
      }
      assert.ok(!/\bBuffer\b/.test(src), `${name} uses Buffer`);
      assert.ok(!/process\.env/.test(src), `${name} reads process.env`);
    });
  }
});
