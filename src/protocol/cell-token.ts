/**
 * Cell inputs (docs/errors.md, "Cell and token inputs"; docs/memory.md, "Tokens and bundles"): a
 * request field that names a cell accepts a bare cell64 or the cell token `<prefix>:cell:<cell64>`
 * that locate mints. The token is an address only: it names a place and carries nothing signed, so
 * resolving it is pure parsing, with no store or network.
 *
 * Every field that takes a cell goes through `directCell` before anything treats the text as a
 * place name; otherwise a token would be sent to the geocoders, which cannot know it.
 */
import { isCell, parseCell } from './cell64.js';
import { SvcError } from './errors.js';

/** The cell token for `cell` under the deployment's prefix word (`svc` by default). */
export function cellToken(prefix: string, cell: string): string {
  return `${prefix}:cell:${cell}`;
}

/** True when `value` is written as a cell token of this prefix (well-formed or not). */
export function isCellToken(prefix: string, value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(`${prefix}:cell:`);
}

/**
 * The cell64 named by `value` when it is a cell64 or a cell token; undefined when it is neither
 * (the caller may then try it as a place name). A cell token whose cell fails the grammar is
 * `invalid_cell` naming `field`: the caller plainly meant a cell, so it is never geocoded.
 */
export function directCell(prefix: string, value: unknown, field = 'cell'): string | undefined {
  if (isCell(value)) return value;
  if (!isCellToken(prefix, value)) return undefined;
  const cell = value.slice(prefix.length + ':cell:'.length);
  try {
    parseCell(cell);
  } catch (e) {
    const reason = e instanceof SvcError ? String(e.details.reason ?? e.message) : String(e);
    throw new SvcError('invalid_cell', `${field}: ${JSON.stringify(value.slice(0, 80))} is a cell token whose cell ${reason}`, { field, reason });
  }
  return cell;
}

/** Like directCell, for fields that take only a cell (no place names): anything else is `invalid_cell` naming `field`. */
export function requireCell(prefix: string, value: unknown, field = 'cell'): string {
  const cell = directCell(prefix, value, field);
  if (cell !== undefined) return cell;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeof value;
  let reason = 'is not a cell64';
  try {
    parseCell(value);
  } catch (e) {
    if (e instanceof SvcError && typeof e.details.reason === 'string') reason = e.details.reason;
  }
  throw new SvcError('invalid_cell', `${field}: ${shown} ${reason} (nor a ${prefix}:cell: token)`, { field, reason });
}
