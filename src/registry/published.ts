/**
 * Manifests this responder has published: the registry and schema CIDs in force at each start,
 * kept in the data directory, so verify_receipt can tell a receipt naming a manifest this
 * responder once used from one naming a manifest it never published.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PublishedManifests {
  registry_cids: string[];
  schema_cids: string[];
}

/** Add the manifests in force to the data directory's record and return every one recorded. */
export function recordPublishedManifests(dataDir: string, current: { registry_cid: string; schema_cid: string }): PublishedManifests {
  const path = join(dataDir, 'manifests-published.json');
  let known: PublishedManifests = { registry_cids: [], schema_cids: [] };
  if (existsSync(path)) {
    try {
      const j = JSON.parse(readFileSync(path, 'utf8')) as Partial<PublishedManifests>;
      known = { registry_cids: Array.isArray(j.registry_cids) ? j.registry_cids : [], schema_cids: Array.isArray(j.schema_cids) ? j.schema_cids : [] };
    } catch {
      // An unreadable record only weakens an advisory: start it again from what is in force.
    }
  }
  const before = known.registry_cids.length + known.schema_cids.length;
  if (!known.registry_cids.includes(current.registry_cid)) known.registry_cids.push(current.registry_cid);
  if (!known.schema_cids.includes(current.schema_cid)) known.schema_cids.push(current.schema_cid);
  if (known.registry_cids.length + known.schema_cids.length !== before) {
    writeFileSync(`${path}.tmp`, JSON.stringify(known, null, 1) + '\n');
    renameSync(`${path}.tmp`, path);
  }
  return known;
}
