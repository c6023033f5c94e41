/**
 * The client package (packages/client) against the server it talks to: its operation file is
 * the one scripts/gen-client.ts generates from the operation table (run `npm run gen:client`
 * when this fails), and its runtime code stays browser-safe — it reaches only its own sources
 * and src/protocol/, imports nothing from node:, and its package declares every package it uses.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { GENERATED, renderClientOperations } from '../../scripts/gen-client.js';
import { OPERATIONS } from '../../src/api/ops/index.js';
import { OPERATION_TABLE } from '../../packages/client/src/operations.gen.js';

describe('packages/client/src/operations.gen.ts', () => {
  it('is the file the operation table generates', () => {
    assert.ok(existsSync(GENERATED), 'not generated: run `npm run gen:client`');
    assert.ok(readFileSync(GENERATED, 'utf8') === renderClientOperations(), 'packages/client/src/operations.gen.ts differs from the operation table: run `npm run gen:client`');
  });

  it('lists every operation with its method and path', () => {
    assert.deepEqual(
      Object.entries(OPERATION_TABLE).map(([name, o]) => [name, o.method, o.path]),
      OPERATIONS.map((o) => [o.name, o.method, o.path]),
    );
    assert.equal(OPERATION_TABLE.recall.signed, 'required');
    assert.equal(OPERATION_TABLE.scope_bearer.signed, 'none');
  });
});

describe('the client is browser-safe', () => {
  const entry = 'packages/client/src/index.ts';
  // Static imports and re-exports (`import … from`, `export … from`, bare `import '…'`) and dynamic imports.
  const spec = /^\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

  /** Every file the entry reaches through value and type imports, and the bare specifiers they name. */
  function reach(): { files: string[]; bare: Set<string> } {
    const files: string[] = [];
    const bare = new Set<string>();
    const todo = [entry];
    const seen = new Set(todo);
    while (todo.length > 0) {
      const f = todo.pop()!;
      files.push(f);
      // Comments may quote import lines; only code counts.
      const code = readFileSync(f, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(spec)) {
        const s = m[1] ?? m[2] ?? m[3];
        if (!s.startsWith('.')) {
          bare.add(s);
          continue;
        }
        const target = normalize(join(dirname(f), s)).replace(/\.js$/, '.ts');
        if (!seen.has(target)) {
          seen.add(target);
          todo.push(target);
        }
      }
    }
    return { files: files.sort(), bare };
  }

  it('reaches only its own sources and src/protocol/', () => {
    const { files } = reach();
    assert.ok(files.includes('src/protocol/verify-response.ts') && files.includes('packages/client/src/client.ts'), 'the walk follows the imports');
    const outside = files.filter((f) => !f.startsWith('packages/client/src/') && !f.startsWith('src/protocol/'));
    assert.deepEqual(outside, []);
  });

  it('imports nothing from node: and only the packages its package.json declares', () => {
    const pkg = JSON.parse(readFileSync('packages/client/package.json', 'utf8'));
    const rootPkg = JSON.parse(readFileSync('package.json', 'utf8'));
    const declared = Object.keys(pkg.dependencies ?? {});
    const used = [...reach().bare].map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
    assert.ok(used.includes('@noble/hashes'), 'the walk sees the packages');
    assert.deepEqual(
      used.filter((s) => s.startsWith('node:')),
      [],
    );
    assert.deepEqual(
      [...new Set(used)].filter((s) => !declared.includes(s)),
      [],
    );
    // The package asks for the versions the repository builds and tests the protocol with.
    for (const d of declared) assert.equal(pkg.dependencies[d], rootPkg.dependencies[d], d);
  });

  it('is a package of its own: ESM, typed exports, the build output shipped', () => {
    const pkg = JSON.parse(readFileSync('packages/client/package.json', 'utf8'));
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.version, '0.1.0');
    const exp = pkg.exports['.'];
    assert.ok(exp.types.endsWith('.d.ts') && exp.import.endsWith('.js'));
    assert.equal(relative('dist', exp.import.replace(/^\.\//, '')), 'packages/client/src/index.js');
    assert.ok(pkg.files.includes('dist'));
  });
});
