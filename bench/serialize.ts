/**
 * Encoding a warm recall answer: the reply serializer in use (api/json.ts, which keeps the JSON of
 * served facts once per frozen object) against fast-json-stringify compiled from the operation's
 * declared response schema (what fastify would do with `response: {200: schema}`) and against
 * plain JSON.stringify. The answer is the real one: a responder in process, four facts attested,
 * the recall of two bands run twice so the second is served warm. Rates in one run; prints JSON.
 *
 *   npm run bench serialize
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastJson from 'fast-json-stringify';
import * as P from '../src/protocol/index.js';
import { toJson } from '../src/api/json.js';
import { OPERATIONS } from '../src/api/ops/index.js';
import { runOperation } from '../src/api/routes/operations.js';
import { loadConfig } from '../src/config.js';
import { openService } from '../src/service.js';
import { acceptBatch } from '../src/primitives/write/attest.js';
import { parisBatch, rate } from './harness.js';

const data = mkdtempSync(join(tmpdir(), 'svc-bench-serialize-'));
const seed = P.blake3(P.utf8('bench operator'));
const key = P.b32encode(P.portableEd25519.publicKey(seed));
const service = await openService(loadConfig({ SVC_DATA: data, SVC_LOG_LEVEL: 'silent', SVC_ATTESTER_KEYS: key, SVC_UPSTREAM_PHOTON_URL: 'off', SVC_UPSTREAM_NOMINATIM_URL: 'off' }, {}), {
  materializers: [],
});
try {
  const seeded = parisBatch(seed, service.manifests);
  await acceptBatch(service, seeded.envelope);
  const recall = OPERATIONS.find((o) => o.name === 'recall')!;
  const input = seeded.recall;
  await runOperation(service, recall, structuredClone(input), {}, 'rest');
  const answer = await runOperation(service, recall, structuredClone(input), {}, 'rest');

  const schemaSerializer = fastJson(recall.output as object);
  const outputs = { reply_serializer: toJson(answer), schema_serializer: schemaSerializer(answer), json_stringify: JSON.stringify(answer) };
  // Byte-equal to JSON.stringify, and equal as data (same fields and values, any key order).
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  const sameData = (a: string, b: string) => JSON.stringify(sorted(JSON.parse(a))) === JSON.stringify(sorted(JSON.parse(b)));
  const ops = {
    reply_serializer: rate(() => toJson(answer), 2000, 5),
    schema_serializer: rate(() => schemaSerializer(answer), 2000, 5),
    json_stringify: rate(() => JSON.stringify(answer), 2000, 5),
  };
  console.log(
    JSON.stringify(
      {
        bench: 'serialize',
        answer_bytes: outputs.reply_serializer.length,
        same_bytes_as_json_stringify: { reply_serializer: outputs.reply_serializer === outputs.json_stringify, schema_serializer: outputs.schema_serializer === outputs.json_stringify },
        same_data_as_json_stringify: { reply_serializer: sameData(outputs.reply_serializer, outputs.json_stringify), schema_serializer: sameData(outputs.schema_serializer, outputs.json_stringify) },
        ops_per_s: Object.fromEntries(Object.entries(ops).map(([k, v]) => [k, v.ops_per_s])),
        ratio_schema_over_reply: Number((ops.schema_serializer.ops_per_s / ops.reply_serializer.ops_per_s).toFixed(2)),
        ratio_stringify_over_reply: Number((ops.json_stringify.ops_per_s / ops.reply_serializer.ops_per_s).toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  await service.close();
  rmSync(data, { recursive: true, force: true });
}
