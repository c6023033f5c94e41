/**
 * Argument parsing shared by every `svc` command: node:util parseArgs in strict mode, run before
 * a command does anything. `--help` / `-h` print the command's usage on stdout and exit 0; an
 * unknown flag, a flag missing its value, or an argument the command does not take is refused on
 * stderr with exit 2 (a usage error, as `svc verify` has always answered). A command that retires
 * a key or writes a file must never read a flag it does not know as "go ahead".
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Exit status of a usage error (bad flag, missing or extra argument). */
export const USAGE_ERROR = 2;

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

export interface CommandSpec {
  /** As typed after `svc`: `rotate-key`, `log`. */
  name: string;
  usage: string;
  /** The command's own flags; `--help`/`-h` is added to every command. */
  options?: OptionSpecs;
  /** How many positional arguments the command takes (default none), and their names for messages. */
  positionals?: { min: number; max: number; names: string[] };
}

export type ParsedCommand = { run: true; values: Record<string, string | boolean | undefined>; positionals: string[] } | { run: false; code: number };

/** Print a usage error for `spec` on stderr; the exit status to return. */
export function usageError(spec: Pick<CommandSpec, 'name' | 'usage'>, message: string): number {
  console.error(`svc ${spec.name}: ${message}\n\n${spec.usage}`);
  return USAGE_ERROR;
}

function isParseArgsError(e: unknown): e is Error {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/**
 * Parse `args` for `spec`. `run: false` means the caller returns `code` at once: help was shown
 * (0) or the arguments were refused (2). Nothing else happens either way.
 */
export function parseCommand(spec: CommandSpec, args: string[]): ParsedCommand {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...spec.options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true }) as typeof parsed;
  } catch (e) {
    if (isParseArgsError(e)) return { run: false, code: usageError(spec, e.message) };
    throw e;
  }
  if (parsed.values.help) {
    console.log(spec.usage);
    return { run: false, code: 0 };
  }
  const { min, max, names } = spec.positionals ?? { min: 0, max: 0, names: [] };
  const n = parsed.positionals.length;
  if (n > max) {
    const extra = parsed.positionals[max];
    return { run: false, code: usageError(spec, max === 0 ? `takes no arguments (got ${JSON.stringify(extra)})` : `unexpected argument ${JSON.stringify(extra)}`) };
  }
  if (n < min) return { run: false, code: usageError(spec, `missing ${names[n] ?? 'argument'}`) };
  return { run: true, values: parsed.values, positionals: parsed.positionals };
}
