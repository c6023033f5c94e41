/**
 * Which Overture Maps release to read, discovered from Overture's STAC catalogue (source
 * overture_stac) rather than pinned: Overture publishes a release a month and deletes the old
 * ones, so a pinned release would stop resolving within months.
 *
 * The root catalogue (`catalog.json`) names the current release in its top-level `latest` field,
 * marks the child link of that release with `"latest": true`, and lists every published release
 * as a `child` link to `./<release>/catalog.json`. The release is taken from `latest`, else from
 * the flagged child, else as the greatest release id among the children (ids are dates,
 * `YYYY-MM-DD.N`, so they sort in time); the other children, newest first, are the fallbacks a
 * connector may read when the newest release lacks a theme's tiles.
 *
 * A discovered release is kept for RELEASE_TTL_MS. When the catalogue cannot be read (or answers
 * something that is not the catalogue) the last release discovered in this process is used
 * instead, and the catalogue is not asked again for RETRY_HOLD_MS; with no release discovered
 * yet, the failure is the caller's (nothing is signed without a known release).
 */
import type { UpstreamClient } from './http.js';
import { FormatMismatch, objectAt, stringAt } from './json-helpers.js';

/** How long a discovered release is used before the catalogue is asked again. */
export const RELEASE_TTL_MS = 6 * 60 * 60_000;
/** After a failed discovery, how long the last known release is used before asking again. */
export const RETRY_HOLD_MS = 5 * 60_000;
/** Time one discovery may take (its own budget: concurrent callers share it). */
export const DISCOVERY_BUDGET_MS = 10_000;
/** The catalogue is a few kilobytes; anything far larger is not it. */
const CATALOGUE_MAX_BYTES = 4 * 1024 * 1024;

/** A release id as Overture names them (`2026-03-18.0`; early ones `2024-04-16-beta.0`). */
export const RELEASE_ID = /^\d{4}-\d{2}-\d{2}(?:-[a-z]+)?\.\d+$/;

export interface Releases {
  /** The current release. */
  latest: string;
  /** Every release the catalogue lists, newest first (the current one included). */
  all: string[];
}

/** The release id a child link points at (`./2026-03-18.0/catalog.json` → `2026-03-18.0`). */
function releaseOfHref(href: string): string | null {
  const parts = href.replace(/\/catalog\.json$/, '').split('/');
  const id = parts[parts.length - 1] ?? '';
  return RELEASE_ID.test(id) ? id : null;
}

/** The releases named by a root catalogue; FormatMismatch when it is not Overture's catalogue. */
export function parseCatalogue(data: unknown): Releases {
  const root = objectAt(data, 'catalog.json');
  if (root.type !== 'Catalog') throw new FormatMismatch(`catalog.json: type is ${JSON.stringify(root.type)}, not "Catalog"`);
  if (!Array.isArray(root.links)) throw new FormatMismatch('catalog.json: links is not an array');
  const children: string[] = [];
  let flagged: string | null = null;
  for (const [i, l] of root.links.entries()) {
    const link = objectAt(l, `catalog.json links[${i}]`);
    if (link.rel !== 'child') continue;
    const id = releaseOfHref(stringAt(link.href, `catalog.json links[${i}].href`));
    if (id === null) continue;
    children.push(id);
    if (link.latest === true) flagged = id;
  }
  const all = [...new Set(children)].sort().reverse();
  let latest: string | null = null;
  if (root.latest !== undefined) {
    latest = stringAt(root.latest, 'catalog.json latest');
    if (!RELEASE_ID.test(latest)) throw new FormatMismatch(`catalog.json: latest ${JSON.stringify(latest.slice(0, 40))} is not a release id`);
  }
  latest ??= flagged ?? all[0] ?? null;
  if (latest === null) throw new FormatMismatch('catalog.json names no release (no latest, no release child link)');
  return { latest, all: [latest, ...all.filter((r) => r !== latest)] };
}

/** A discovery's answer: the releases, and whether they come from the catalogue or the last known answer. */
export interface DiscoveredReleases extends Releases {
  via: 'catalogue' | 'last_known';
  /** Why the catalogue was not used (via last_known). */
  catalogue_error?: string;
}

/** Discovery of the current release, shared by every read of one connector. */
export class ReleaseDiscovery {
  private known: { releases: Releases; at: number } | null = null;
  private failed: { until: number; why: string } | null = null;
  private inflight: Promise<Releases> | null = null;
  /** Catalogue reads sent (tests read it). */
  fetches = 0;

  constructor(
    private readonly client: UpstreamClient,
    /** The root catalogue's URL. */
    readonly url: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The releases to read; throws the catalogue's failure when no release is known yet. */
  async current(): Promise<DiscoveredReleases> {
    const t = this.now();
    if (this.known && t - this.known.at < RELEASE_TTL_MS) return { ...this.known.releases, via: 'catalogue' };
    if (this.known && this.failed && t < this.failed.until) return { ...this.known.releases, via: 'last_known', catalogue_error: this.failed.why };
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = null;
    });
    try {
      const releases = await this.inflight;
      return { ...releases, via: 'catalogue' };
    } catch (e) {
      if (!this.known) throw e;
      return { ...this.known.releases, via: 'last_known', catalogue_error: this.failed?.why ?? (e as Error).message };
    }
  }

  private async fetch(): Promise<Releases> {
    this.fetches++;
    try {
      const { data } = await this.client.json(this.url, { deadline: Date.now() + DISCOVERY_BUDGET_MS, maxBytes: CATALOGUE_MAX_BYTES });
      const releases = parseCatalogue(data);
      this.known = { releases, at: this.now() };
      this.failed = null;
      return releases;
    } catch (e) {
      this.failed = { until: this.now() + RETRY_HOLD_MS, why: (e as Error).message };
      throw e;
    }
  }
}
