/**
 * Resolving an embedding field token (POST /v1/tessera_field/resolve; docs/rasters.md, "Resolve
 * and rebuild"): the signed tessera_field@1 record the token names and the artifact it pins. An
 * artifact evicted from the store is rebuilt from the record alone (the pinned tile files and
 * windows, the same assembly), checked against the signed artifact_cid, and stored again.
 */
import { SvcError } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { ensureField } from './tessera-field.js';
import { isRecordOf, parseAreaToken, TESSERA_FIELD_RECIPE, type FieldRecord } from './tessera-record.js';

export interface ResolvedArtifact {
  cid: string;
  media_type: string;
  bytes: number;
  url: string;
  state: 'stored' | 'rebuilt';
}

export interface FieldResolveAnswer {
  token: string;
  aoi_cid: string;
  year: number;
  derivation_cid: string;
  record: ServedFact;
  artifact: ResolvedArtifact;
  receipt: Receipt;
}

/** The record a token names, checked against the token's claims. */
export async function recordOfToken<T extends { aoi_cid: string }>(ctx: ServiceContext, kind: 'tessera' | 'archetypes', token: string, recipe: string, claim: (v: T) => number) {
  const t = parseAreaToken(ctx.config.prefix, kind, token);
  const f = await ctx.store.getFact(t.derivation_cid);
  if (!isRecordOf<T>(f, recipe)) {
    throw new SvcError('cid_not_found', `token: no ${recipe} derivation record ${t.derivation_cid} is stored here (records are per deployment)`, { field: 'token', derivation_cid: t.derivation_cid });
  }
  const v = f.body.value;
  const what = kind === 'tessera' ? 'year' : 'k';
  if (t.aoi_cid !== v.aoi_cid || t.n !== claim(v)) {
    const claimed = { aoi_cid: t.aoi_cid, [what]: t.n };
    const signed = { aoi_cid: v.aoi_cid, [what]: claim(v) };
    throw new SvcError('token_claim_mismatch', `token: states ${JSON.stringify(claimed)} but the signed record has ${JSON.stringify(signed)}`, { field: 'token', claimed, signed });
  }
  return f;
}

export async function resolveField(ctx: ServiceContext, input: { token: string }, o: { deadline: number }): Promise<FieldResolveAnswer> {
  const f = await recordOfToken<FieldRecord>(ctx, 'tessera', input.token, TESSERA_FIELD_RECIPE, (v) => v.year);
  const v = f.body.value;
  const state = await ensureField(ctx, f, input.token, o.deadline);
  const record = await serveFact(ctx, f);
  return {
    token: input.token,
    aoi_cid: v.aoi_cid,
    year: v.year,
    derivation_cid: f.fact_cid,
    record,
    artifact: { cid: v.artifact.cid, media_type: v.artifact.media_type, bytes: v.artifact.bytes, url: `/v1/artifacts/${v.artifact.cid}`, state },
    receipt: issueReceipt(ctx, 'tessera_field_resolve', [f.cell], [f.fact_cid], {
      field: { aoi_cid: v.aoi_cid, derivation_cid: f.fact_cid },
      merkle_proof: f.proof,
      source_versions: v.source_versions,
    }),
  };
}
