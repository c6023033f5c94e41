/**
 * Assembles one responder: configuration → registry and manifests → responder key → store.
 * The result is the ServiceContext every primitive takes, plus close().
 */
import { mkdirSync } from 'node:fs';
import type { Config } from './config.js';
import { currentSigner, loadResponderKeys, watchResponderKeys } from './keys.js';
import { serverEd25519 } from './crypto/server-ed25519.js';
import type { ServiceContext } from './primitives/context/context.js';
import { manifestsOf } from './registry/manifests.js';
import { loadRegistry } from './registry/registry.js';
import { recordPublishedManifests } from './registry/published.js';
import { installFastBlake3 } from './crypto/fast-blake3.js';
import { openStore, type CachedStore } from './store/index.js';
import type { StoreConfig } from './store/contract.js';
import { Materializations } from './primitives/materialize/materialize.js';
import { Metrics } from './lib/metrics.js';
import { materializerRegistry, type Materializer } from './sources/contract.js';
import { buildMaterializers } from './sources/index.js';
import { placeResolver } from './primitives/locate/locate.js';
import { closeVectorIndex, startVectorIndex } from './primitives/embeddings/similar.js';

export interface Service extends ServiceContext {
  close(): Promise<void>;
}

/** The store's part of the configuration. */
export function storeConfigOf(config: Config): StoreConfig {
  return {
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    redisUrl: config.redisUrl,
    scanCellLimit: config.scanCellLimit,
    segmentMaxBytes: config.segmentMaxBytes,
    prefix: config.prefix,
    artifactMaxBytes: config.artifactMaxBytes,
  };
}

export interface OpenServiceOptions {
  now?: () => Date;
  materializers?: Materializer[];
  /** A store opened elsewhere (a worker's, forwarding to the owning process); closed with the service. */
  store?: CachedStore;
  /** A worker's: where batch attestations go (the process that owns the store). */
  owner?: ServiceContext['owner'];
  /**
   * Responder keys loaded and watched by the caller (the owner of workers' store): used as they
   * are, and not watched a second time.
   */
  keys?: ReturnType<typeof loadResponderKeys>;
  /** False: no vector index (a process that serves no similarity queries); default true. */
  vectorIndex?: boolean;
}

/** Open every part of a responder for `config`. */
export async function openService(config: Config, opts: OpenServiceOptions = {}): Promise<Service> {
  installFastBlake3();
  mkdirSync(config.dataDir, { recursive: true });
  const registry = loadRegistry();
  const manifests = manifestsOf(registry);
  const keys = opts.keys ?? loadResponderKeys(config.dataDir);
  const store =
    opts.store ??
    (await openStore(
      storeConfigOf(config),
      // Tree heads are signed with the current key, also after a live rotation.
      currentSigner(keys),
      opts.now ? { clock: opts.now } : {},
    ));
  const service: Service = {
    config,
    registry,
    manifests,
    publishedManifests: recordPublishedManifests(config.dataDir, manifests),
    keys,
    store,
    ...(opts.owner ? { owner: opts.owner } : {}),
    ed25519: serverEd25519,
    now: opts.now ?? (() => new Date()),
    materializers: materializerRegistry(opts.materializers ?? buildMaterializers(config, registry).materializers),
    materializations: new Materializations(),
    // The registry reads the log size and the cache's counts when it is scraped (docs/deploy.md).
    metrics: new Metrics({
      logEntries: () => store.log.size(),
      cacheLookups: () => store.lookups,
      info: { driver: store.driver, cache: config.redisUrl ? 'redis' : 'memory' },
    }),
    // The vector index is saved first (it reads the log); the store closes what it owns, the
    // geocoder cache of locate included.
    close: async () => {
      stopKeyWatch();
      await closeVectorIndex(service);
      await store.close();
    },
  };
  // `svc rotate-key` on a running responder takes effect within seconds (docs/security.md).
  const stopKeyWatch = opts.keys ? () => undefined : watchResponderKeys(config.dataDir, keys, (line) => process.stderr.write(`${line}\n`));
  // Place names in recall (`cell: "Paris"`) resolve through the locate cascade.
  service.locate = placeResolver(service);
  // The saved vector index is loaded and the log followed from the start, not at the first query.
  if (opts.vectorIndex !== false) startVectorIndex(service);
  return service;
}
