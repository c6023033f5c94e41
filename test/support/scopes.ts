/** Scope read bearers for tests, obtained the way a client would (docs/scopes.md). */
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { scopeBearerRequestDigest } from '../../src/protocol/scope-bearer.js';
import type { TestApp } from './app.js';
import type { TestAttester } from './attester.js';
import { freshExp } from './fresh-exp.js';

/** A signed POST /v1/scope_bearer body for `who` over `scope`, expiring `ttlS` seconds from the responder's now. */
export function bearerRequest(t: TestApp, who: TestAttester, scope: P.Scope, ttlS = 300) {
  const exp = freshExp(`bearer|${who.publicKey}|${JSON.stringify(scope)}`, Math.floor(t.service.now().getTime() / 1000), ttlS);
  const digest = scopeBearerRequestDigest(scope, P.b32decode(who.publicKey, 32), exp, t.service.keys.signer.publicKey, t.service.config.prefix);
  return { scope, key: who.publicKey, exp, signature: P.b32encode(P.portableEd25519.sign(digest, who.seed)) };
}

/** The Authorization header value of a fresh bearer for `who` over `scope` (asserts it is issued). */
export async function bearerFor(t: TestApp, who: TestAttester, scope: P.Scope): Promise<string> {
  const r = await t.app.inject({ method: 'POST', url: '/v1/scope_bearer', payload: bearerRequest(t, who, scope) });
  assert.equal(r.statusCode, 200, r.body);
  return `Bearer ${r.json().bearer}`;
}
