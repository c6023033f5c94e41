/**
 * `cell` and `cell64` name the same parameter (docs/operations.md, "One name for a cell"): each
 * operation declares one of them, and a caller — often a model that used the other name with the
 * previous tool — may send either. The other name is moved onto the declared one before
 * validation, over REST and MCP alike; a request that sends both keeps both (and is refused for
 * the undeclared one).
 */
export interface CellAlias {
  readonly from: 'cell' | 'cell64';
  readonly to: 'cell' | 'cell64';
}

/** The alias an input schema admits: only when it declares exactly one of the two names. */
export function cellAliasOf(schema: unknown): CellAlias | undefined {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props) return undefined;
  const cell = 'cell' in props;
  const cell64 = 'cell64' in props;
  if (cell64 && !cell) return { from: 'cell', to: 'cell64' };
  if (cell && !cell64) return { from: 'cell64', to: 'cell' };
  return undefined;
}

/** Moves the undeclared name onto the declared one, in place. */
export function applyCellAlias(alias: CellAlias | undefined, input: unknown): void {
  if (!alias || input === null || typeof input !== 'object' || Array.isArray(input)) return;
  const o = input as Record<string, unknown>;
  if (!(alias.from in o) || alias.to in o) return;
  o[alias.to] = o[alias.from];
  delete o[alias.from];
}
