/**
 * Voiding a key's bearers (docs/scopes.md, "Memory bearers"): the key signs a bearer_revocation
 * statement with a not_before time, the responder mints a `memory.bearer_revocation` record, and
 * from then on every bearer of that key issued before not_before (or carrying no issue time) is
 * refused with 401 `unauthorized` (`reason: bearer_revoked`) on every responder sharing the
 * store: bearer checks read the key's records from the store on each use (standing.ts).
 */
import { bearerRevocationDigest } from '../../protocol/device-statements.js';
import { verifyStrict } from '../../protocol/ed25519.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds } from '../../protocol/receipt.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact } from '../facts/facts-view.js';
import { checkExp, mintRecord, nowUnix, publicKeyOf, signatureOf } from './common.js';
import { useStatementOnce } from './single-use.js';
import { BEARER_REVOCATION_BAND, isScopeKey, keyRecords, keyStatus, withKeyLock } from '../write/standing.js';

/** Without not_before, the responder looks for the second the statement was signed at, this far back. */
export const NOT_BEFORE_SEARCH_SECS = 60;

/** A bearer revocation, as the operation's schema admits it (integers, key and signature forms checked). */
export interface BearerRevokeRequest {
  key: string;
  /** Omitted: the second the statement was signed at, found from the signature. */
  not_before?: number;
  exp: number;
  signature: string;
}

async function answer(ctx: ServiceContext, f: StoredFact, requested: number, already: boolean) {
  const nb = (f.body.value as { not_before: number }).not_before;
  return {
    key: (f.body.value as { key: string }).key,
    not_before: nb,
    not_before_at: isoSeconds(nb * 1000),
    requested_not_before: requested,
    /** True when an earlier revocation already voids everything this one would: nothing is minted. */
    already_covered: already,
    revocation: f.fact_cid,
    subject: f.cell,
    fact: await serveFact(ctx, f),
    receipt: issueReceipt(ctx, 'memory_bearer_revoke', [f.cell], [f.fact_cid], { merkle_proof: f.proof }),
  };
}

/** POST /v1/memory/bearer/revoke. */
export async function revokeBearers(ctx: ServiceContext, req: BearerRevokeRequest) {
  const pub = publicKeyOf('key', req.key);
  const key = req.key;
  if (key === ctx.keys.publicKeyB32) throw invalidArgument('key', "is the responder's own key: it holds no bearers");
  const exp = checkExp(ctx, req.exp);
  const sig = signatureOf('signature', req.signature);
  const now = nowUnix(ctx);
  const responder = ctx.keys.signer.publicKey;
  const verifies = (nb: number) => verifyStrict(sig, bearerRevocationDigest(pub, nb, exp, responder, ctx.config.prefix), pub, ctx.ed25519);
  let notBefore: number | undefined;
  if (req.not_before !== undefined) {
    const nb = req.not_before;
    if (nb > now) throw new SvcError('invalid_argument', `not_before: ${nb} lies ${nb - now} s in the future; bearers can be voided up to now, not ahead`, { field: 'not_before', now });
    if (!verifies(nb))
      throw new SvcError('bad_signature', 'signature: does not verify over the bearer_revocation statement (key, not_before, exp, responder key)', {
        field: 'signature',
        statement: 'bearer_revocation',
      });
    notBefore = nb;
  } else {
    // Default: now, meaning the second the key signed at (it put that second in the statement).
    for (let k = 0; k <= NOT_BEFORE_SEARCH_SECS && notBefore === undefined; k++) if (verifies(now - k)) notBefore = now - k;
    if (notBefore === undefined) {
      throw new SvcError(
        'bad_signature',
        `signature: without not_before, the statement must carry the Unix second it was signed at (within the last ${NOT_BEFORE_SEARCH_SECS} s); send not_before explicitly`,
        {
          field: 'signature',
          statement: 'bearer_revocation',
        },
      );
    }
  }
  const nb = notBefore;

  // Authenticated: a key that could never obtain a bearer here has none to void (and mints nothing).
  const status = await keyStatus(ctx, key);
  if (status.standing === 'unlisted' && !isScopeKey(ctx, key)) {
    throw new SvcError(
      'unauthorized',
      `key: ${key} is neither enrolled, listed nor a configured scope key here: it holds no bearers to void`,
      { field: 'key', reason: 'unknown_key' },
      { status: 403 },
    );
  }
  return withKeyLock(ctx, key, async () => {
    await useStatementOnce(ctx, 'bearer_revocation', bearerRevocationDigest(pub, nb, exp, responder, ctx.config.prefix), exp);
    const records = await keyRecords(ctx, key);
    if (records.bearerRevocation && records.bearersNotBefore !== null && records.bearersNotBefore >= nb) return answer(ctx, records.bearerRevocation, nb, true);
    return answer(ctx, await mintRecord(ctx, BEARER_REVOCATION_BAND, { key, not_before: nb }, 'memory_bearer_revoke'), nb, false);
  });
}
