/**
 * The README's configuration table, generated from the declaration in src/config.ts so the two
 * cannot drift. Prints the markdown table; with --write, replaces the table in README.md
 * between its config-table markers.
 * Run: node --import tsx scripts/config-table.ts [--write]   (npm run docs:config)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CONFIG_VARS, type VarSpec } from '../src/config.js';

export const BEGIN = '<!-- config-table:begin -->';
export const END = '<!-- config-table:end -->';
export const README = new URL('../README.md', import.meta.url);

/**
 * A default as the table shows it: a dash when unset, numbers as they are, a phrase (a default
 * that is not a literal value, such as "public endpoint") as words, any other value as code.
 */
function defaultCell(d: string): string {
  if (d === '') return '—';
  if (/^\d+$/.test(d) || /\s/.test(d)) return d;
  return `\`${d}\``;
}

/** A pipe inside a cell would end it. */
const cell = (s: string) => s.replace(/\|/g, '\\|');

export function renderConfigTable(vars: readonly VarSpec[] = CONFIG_VARS): string {
  const rows = vars.map((v) => `| \`${cell(v.name)}\` | ${cell(defaultCell(v.default))} | ${cell(v.description)} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The table between the markers of `readme`, or undefined when the markers are missing. */
export function currentConfigTable(readme: string): string | undefined {
  const a = readme.indexOf(BEGIN);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) return undefined;
  return readme.slice(a + BEGIN.length, b).trim();
}

/** `readme` with the text between the markers replaced by `table`. */
export function withConfigTable(readme: string, table: string): string {
  const a = readme.indexOf(BEGIN);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md: the markers ${BEGIN} and ${END} are missing`);
  return `${readme.slice(0, a + BEGIN.length)}\n${table}\n${readme.slice(b)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = renderConfigTable();
  if (process.argv.includes('--write')) {
    const before = readFileSync(README, 'utf8');
    const after = withConfigTable(before, table);
    if (after !== before) writeFileSync(README, after);
    process.stdout.write(after === before ? 'README.md: configuration table already up to date\n' : 'README.md: configuration table rewritten\n');
  } else {
    process.stdout.write(`${table}\n`);
  }
}
