/**
 * Agent notes written (docs/memory.md): an agent writes `memory.note` records signed with its own
 * key through the ordinary batch path. Searching them is note-search.ts.
 */
import { invalidArgument } from '../../protocol/errors.js';
import { NOTE_BAND } from '../../store/memory.js';
import { acceptBatch, type AttestRequest } from '../write/attest.js';
import { reserveDaily } from '../write/attester-quota.js';
import type { ServiceContext } from '../context/context.js';

export const MAX_NOTES_PER_WRITE = 256;

/**
 * Write 1..256 notes: the attest envelope whose facts are all memory.note records. A key's notes
 * are metered by SVC_NOTE_DAILY_QUOTA (attester-quota.ts): checked once the batch is
 * authenticated (only a key that signed it learns its count), held until the append settles,
 * and refused whole, before anything is written.
 */
export async function writeNotes(ctx: ServiceContext, req: AttestRequest) {
  const facts = req?.facts;
  if (!Array.isArray(facts) || facts.length === 0) throw invalidArgument('facts', 'expected 1..256 memory.note records');
  if (facts.length > MAX_NOTES_PER_WRITE) throw invalidArgument('facts', `at most ${MAX_NOTES_PER_WRITE} notes per write`);
  facts.forEach((f, i) => {
    if ((f as { band?: unknown })?.band !== NOTE_BAND) throw invalidArgument(`facts[${i}].band`, `expected ${NOTE_BAND} (other records go through /v1/attest, /v1/edges or /v1/entity/alias)`);
  });
  let release: (() => void) | undefined;
  const quota = { name: 'notes', limit: ctx.config.noteDailyQuota, variable: 'SVC_NOTE_DAILY_QUOTA' } as const;
  try {
    const res = await acceptBatch(ctx, req, 'memory_notes', {
      beforeAppend: async (_scope, attester) => {
        // The responder's own key is never metered, as in every daily quota.
        if (attester !== ctx.keys.publicKeyB32) release = await reserveDaily(ctx, quota, attester, facts.length);
      },
    });
    return { ...res, notes: res.fact_cids.map((fact_cid, i) => ({ fact_cid, subject: (facts[i] as { cell: string }).cell })) };
  } finally {
    release?.();
  }
}
