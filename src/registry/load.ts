/**
 * Reading the registry: the JSON data files under ./data, checked (validate.ts), then copied,
 * frozen and indexed into the typed maps with the manifest CID of each file. Loaded once per
 * process and shared.
 */
import { readFileSync } from 'node:fs';
import { contentId } from '../protocol/cid.js';
import { deepFreeze } from '../protocol/freeze.js';
import type { AlgorithmEntry, BandEntry, FunctionEntry, HuntEvent, RawRegistry, Registry, SourceEntry, TopicEntry } from './types.js';
import { checkRegistry, FILES, RegistryError } from './validate.js';

/** Validates the six parsed data files together and builds the typed registry with manifest CIDs. */
export function validateRegistry(raw: RawRegistry): Registry {
  checkRegistry(raw);

  // Validated: copy (the caller keeps its objects) and freeze, so the memoised registry is shared safely.
  const copy = deepFreeze(structuredClone(raw)) as {
    bands: BandEntry[];
    sources: SourceEntry[];
    functions: FunctionEntry[];
    algorithms: AlgorithmEntry[];
    topics: TopicEntry[];
    hunt_events: { events: HuntEvent[]; not_yet_implemented: Record<string, string> };
  };
  const byKey = <T extends { key: string }>(list: readonly T[]): ReadonlyMap<string, T> => new Map(list.map((x) => [x.key, x]));
  const huntEvents = new Map(copy.hunt_events.events.map((e) => [e.event, e]));
  const byName = new Map<string, HuntEvent>();
  for (const e of copy.hunt_events.events) for (const n of [e.event, ...e.aliases]) byName.set(n, e);
  return Object.freeze({
    bands: byKey(copy.bands),
    bandList: copy.bands,
    sources: byKey(copy.sources),
    sourceList: copy.sources,
    functions: byKey(copy.functions),
    functionList: copy.functions,
    algorithms: byKey(copy.algorithms),
    algorithmList: copy.algorithms,
    topics: byKey(copy.topics),
    topicList: copy.topics,
    huntEvents,
    huntEventList: copy.hunt_events.events,
    huntEventsByName: byName,
    notYetImplemented: new Map(Object.entries(copy.hunt_events.not_yet_implemented)),
    manifests: Object.freeze({
      bands: contentId(copy.bands),
      sources: contentId(copy.sources),
      functions: contentId(copy.functions),
      algorithms: contentId(copy.algorithms),
      topics: contentId(copy.topics),
    }),
  });
}

function readData(file: string): unknown {
  const url = new URL(`./data/${file}`, import.meta.url);
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (err) {
    throw new RegistryError(file, null, null, `cannot be read (${(err as Error).message})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new RegistryError(file, null, null, `is not valid JSON (${(err as Error).message})`);
  }
}

let memo: Registry | undefined;

/** Reads and validates the registry files once; later calls return the same frozen registry. */
export function loadRegistry(): Registry {
  memo ??= validateRegistry({
    bands: readData(FILES.bands),
    sources: readData(FILES.sources),
    functions: readData(FILES.functions),
    algorithms: readData(FILES.algorithms),
    topics: readData(FILES.topics),
    hunt_events: readData(FILES.hunt_events),
  });
  return memo;
}

/** Hunt event by name or alias, case-insensitive; spaces and hyphens count as underscores. */
export function resolveHuntEvent(name: string, registry: Registry = loadRegistry()): HuntEvent | undefined {
  const norm = name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return registry.huntEventsByName.get(norm);
}
