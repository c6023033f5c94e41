/** Shared helpers for the read-primitive route tests: attest facts, call routes, check receipts. */
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import * as P from '../../../../src/protocol/index.js';
import { errorHandler } from '../../../../src/api/errors.js';
import { cellRoutes } from '../../../../src/api/ops/reads-more.js';
import { bundleRoutes } from '../../../../src/api/ops/tokens.js';
import type { TestApp } from '../../../support/app.js';
import type { TestAttester } from '../../../support/attester.js';

export interface Reply {
  status: number;
  body: any;
}

/** POST a JSON body to the app (with `headers`, e.g. a scope bearer's Authorization). */
export async function post(t: TestApp, url: string, payload: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });
  return { status: r.statusCode, body: r.body ? r.json() : null };
}

/** GET a path on any fastify app. */
export async function get(app: FastifyInstance, url: string): Promise<Reply> {
  const r = await app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.body ? r.json() : null };
}

/** Attest facts with an operator key; returns their fact_cids. */
export async function attest(t: TestApp, op: TestAttester, facts: Record<string, unknown>[]): Promise<string[]> {
  const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch(facts, t.service.manifests) });
  assert.equal(r.statusCode, 200, r.body);
  return r.json().fact_cids;
}

/** True when a receipt verifies offline against the responder key. */
export function verifies(t: TestApp, receipt: unknown): boolean {
  return P.verifyReceipt(receipt, { publicKey: t.service.keys.publicKeyB32 }).valid;
}

/** A deterministic 128-D vector (not normalised). */
export function vec(seed: number, dim = 128): number[] {
  return Array.from({ length: dim }, (_, i) => Number(Math.sin(seed * 7.1 + i * 0.37).toFixed(6)));
}

/** The path-parameter routes (cells view, bundle GET) on their own app over the same service. */
export async function paramRoutesApp(t: TestApp): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler(errorHandler);
  await cellRoutes(app, t.service);
  await bundleRoutes(app, t.service);
  await app.ready();
  return app;
}

/** Assert an error envelope with this status and code. */
export function fails(r: Reply, status: number, code: string, field?: string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code, JSON.stringify(r.body));
  assert.equal(r.body.schema, 'svc.error.v1');
  if (field) assert.match(r.body.message, new RegExp(field.replace(/[.[\]]/g, '\\$&')));
}
