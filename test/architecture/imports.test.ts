/**
 * The layout's rules (docs/architecture.md), checked from the code's own imports: no import
 * circle between files, none between the capability folders of src/primitives/, and every
 * layer imports only the layers below it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const SRC = 'src';

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** file → files it imports (static, type-only and dynamic imports alike), all under src/. */
function graph(): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  const spec = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const f of walk(SRC)) {
    const to = new Set<string>();
    for (const m of readFileSync(f, 'utf8').matchAll(spec)) {
      const target = normalize(join(dirname(f), m[1])).replace(/\.js$/, '.ts');
      if (target.startsWith(SRC)) to.add(target);
    }
    g.set(f, to);
  }
  return g;
}

/** The strongly connected components with more than one member (Tarjan). */
function circles(g: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The graph between groups of files (`group` names a file's group; null leaves it out). */
function between(g: Map<string, Set<string>>, group: (f: string) => string | null): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [f, tos] of g) {
    const a = group(f);
    if (a === null) continue;
    if (!out.has(a)) out.set(a, new Set());
    for (const t of tos) {
      const b = group(t);
      if (b !== null && b !== a) out.get(a)!.add(b);
    }
  }
  return out;
}

/** Top-level layers, lowest first: each may import only itself and the layers before it. */
const LAYERS: string[][] = [
  ['protocol'],
  ['config.ts', 'lib', 'crypto', 'registry', 'geo', 'keys.ts', 'cli-args.ts', 'cli-keyfile.ts'],
  ['store', 'sources', 'web'],
  ['primitives'],
  ['api'],
  ['service.ts', 'server.ts', 'workers.ts', 'cli-sign.ts', 'cli-verify.ts', 'cli-writer.ts', 'cli-mcp.ts', 'cli-mcp-bridge.ts'],
  ['cli-commands.ts', 'cli.ts'],
];

describe('import structure (docs/architecture.md)', () => {
  const g = graph();

  it('has no import circle between files', () => {
    assert.deepEqual(
      circles(g).map((c) => c.map((f) => relative(SRC, f))),
      [],
    );
  });

  it('has no circle between the capability folders of primitives/', () => {
    const folder = (f: string) => {
      const r = relative(join(SRC, 'primitives'), f);
      return r.startsWith('..') ? null : r.split('/')[0];
    };
    assert.deepEqual(circles(between(g, folder)), []);
  });

  it('imports point down the layers only', () => {
    const top = (f: string) => relative(SRC, f).split('/')[0];
    const level = new Map<string, number>();
    LAYERS.forEach((names, i) => names.forEach((n) => level.set(n, i)));
    const wrong: string[] = [];
    for (const [f, tos] of g) {
      const a = level.get(top(f));
      assert.notEqual(a, undefined, `${f}: in no layer of LAYERS (add it where it belongs)`);
      for (const t of tos) if ((level.get(top(t)) ?? 0) > a!) wrong.push(`${relative(SRC, f)} -> ${relative(SRC, t)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('keeps src/protocol/ pure: nothing but protocol/ and the standard library of the browser', () => {
    const wrong = [...g].filter(([f]) => top(f) === 'protocol').flatMap(([f, tos]) => [...tos].filter((t) => top(t) !== 'protocol').map((t) => `${f} -> ${t}`));
    assert.deepEqual(wrong, []);
    function top(f: string) {
      return relative(SRC, f).split('/')[0];
    }
  });

  it('keeps source files under 500 lines', () => {
    const long = [...g.keys()].map((f) => [relative(SRC, f), readFileSync(f, 'utf8').split('\n').length] as const).filter(([, n]) => n > 500);
    assert.deepEqual(long, []);
  });
});
