/**
 * The `instructions` an MCP client gets from initialize: what a model needs before its first
 * call, kept short because clients put it into the model's context on every conversation.
 */
export function mcpInstructions(prefix: string, coreCount: number, fullCount: number): string {
  const t = (name: string) => `${prefix}_${name}`;
  return [
    `${prefix} is a verifiable geospatial memory: signed, content-addressed Earth-observation facts (elevation, vegetation, weather, air, embeddings, …) at ~10 m grid cells (cell64 ids) × band × time slot. Every answer carries an Ed25519 receipt that anyone can verify offline with the published key.`,
    `Happy path: 1) ${t('locate')} {place} or {lat, lng} → a cell64 (check selected.is_high_confidence); 2) ${t('recall')} {cell, bands} → signed facts and a receipt (band keys such as indices.ndvi: the resource ${prefix}://catalogue/bands, or GET /v1/bands); 3) ${t('verify_receipt')} with the whole answer (or just {receipt}) → valid true or false, with every fact\'s fact_cid recomputed from its body and matched to a receipt; who signed each fact is in the answer\'s fact_meta.`,
    `A question in plain words ("is Lyon flooded?", "how green is 東京 since 2020?") can go straight to ${t('ask')} {q}: it finds the place and topic, reads the signed facts, answers from them and lists the literal next calls.`,
    `Tools: /mcp lists the ${coreCount} core tools, /mcp/full every read tool (${fullCount}); either endpoint calls any tool by name. Signed writes (attesting facts, notes, edges) are REST only. Private memory: send the scope's bearer as the HTTP header Authorization: Bearer <bearer> of the MCP request and name the scope in the call.`,
    'Failures: a failed tool call is a result with isError: true whose structuredContent has `code` (stable; branch on it), `message`, `hint` (how to recover) and `retry_after` (seconds) where waiting helps. A value that could not be read is reported in materialize_notes, never as zero.',
  ].join('\n');
}
