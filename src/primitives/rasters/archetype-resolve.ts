/**
 * Resolving an archetype map token (POST /v1/region_archetype_map/resolve; docs/rasters.md,
 * "Resolve and rebuild"): the signed region_archetype_map@1 record, the field record it read, and
 * the map artifact, rebuilt from the records when it was evicted (the field first, when it was
 * evicted too).
 */
import { SvcError } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { ensureArchetypeArtifact, type ArchetypeRecord } from './archetype-map.js';
import { ARCHETYPE_RECIPE, areaToken, isRecordOf, TESSERA_FIELD_RECIPE, type FieldRecord } from './tessera-record.js';
import { recordOfToken, type ResolvedArtifact } from './tessera-resolve.js';

export interface ArchetypeResolveAnswer {
  token: string;
  aoi_cid: string;
  k: number;
  year: number;
  derivation_cid: string;
  record: ServedFact;
  artifact: ResolvedArtifact;
  field: { token: string; derivation_cid: string; artifact_cid: string };
  receipt: Receipt;
}

export async function resolveArchetypes(ctx: ServiceContext, input: { token: string }, o: { deadline: number }): Promise<ArchetypeResolveAnswer> {
  const f = await recordOfToken<ArchetypeRecord>(ctx, 'archetypes', input.token, ARCHETYPE_RECIPE, (v) => v.k);
  const v = f.body.value;
  const field = await ctx.store.getFact(v.field.derivation_cid);
  if (!isRecordOf<FieldRecord>(field, TESSERA_FIELD_RECIPE))
    throw new SvcError('cid_not_found', `the field record ${v.field.derivation_cid} of this map is not stored here`, { derivation_cid: v.field.derivation_cid });
  const state = await ensureArchetypeArtifact(ctx, f, o.deadline);
  const a = v.artifact!;
  return {
    token: input.token,
    aoi_cid: v.aoi_cid,
    k: v.k,
    year: v.year,
    derivation_cid: f.fact_cid,
    record: await serveFact(ctx, f),
    artifact: { cid: a.cid, media_type: a.media_type, bytes: a.bytes, url: `/v1/artifacts/${a.cid}`, state },
    field: {
      token: areaToken(ctx.config.prefix, 'tessera', { aoi_cid: field.body.value.aoi_cid, n: field.body.value.year, derivation_cid: field.fact_cid }),
      derivation_cid: field.fact_cid,
      artifact_cid: field.body.value.artifact.cid,
    },
    receipt: issueReceipt(ctx, 'region_archetype_map_resolve', [f.cell, field.cell], [f.fact_cid, field.fact_cid], {
      field: { aoi_cid: v.aoi_cid, derivation_cid: f.fact_cid },
      merkle_proof: f.proof,
      source_versions: v.source_versions,
    }),
  };
}
