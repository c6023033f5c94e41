/**
 * The drain of a shutdown (src/api/shutdown.ts; the whole process under load is
 * test/reliability/graceful-shutdown.test.ts): open event streams end at once, idle kept-alive
 * connections are closed, a request in flight finishes, and one still busy after the grace
 * period is cut.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { drain } from '../../src/api/shutdown.js';
import * as P from '../../src/protocol/index.js';
import { build } from '../support/app.js';
import { fakeConnector, slow } from '../support/fake-connector.js';

/** Open an event stream and resolve once its first event arrived; `ended` resolves when the server ends it. */
function openStream(port: number): Promise<{ ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/stream?interval_s=300' }, (res) => {
      let buf = '';
      const ended = new Promise<void>((r) => res.on('end', () => r()));
      res.on('data', (c) => {
        buf += c;
        if (buf.includes('event: corpus.state')) resolve({ ended });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const value = { status: 'value' as const, value: 3, provenance: { source: 'fake' }, fn: 'fake@1' };

describe('drain', () => {
  it('ends event streams and idle connections, lets the request in flight finish, then no connection is left', async () => {
    const t = await build({}, {}, { materializers: [fakeConnector(['copdem30m.elevation_mean'], { 'copdem30m.elevation_mean': slow(400, value) })] });
    try {
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const port = Number(new URL(base).port);
      const stream = await openStream(port);
      // A kept-alive connection that is idle at the drain.
      assert.equal((await fetch(`${base}/health`)).status, 200);
      const inFlight = fetch(`${base}/v1/recall`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cell: P.cellOf(1, 2), bands: ['copdem30m.elevation_mean'] }),
      });
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      const { forced } = await drain(t.app, 10_000);
      assert.equal(forced, false);
      await stream.ended;
      const r = await inFlight;
      assert.equal(r.status, 200);
      assert.equal((await r.json()).facts.length, 1);
      assert.ok(Date.now() - started < 5000, 'the drain ended with its last request, not at a timeout');
      await assert.rejects(fetch(`${base}/health`), 'no new connection once drained');
      assert.equal((t.app as any).streams.active, 0);
    } finally {
      await t.close();
    }
  });

  it('cuts a connection still busy after the grace period', async () => {
    const t = await build({}, {}, { materializers: [fakeConnector(['copdem30m.elevation_mean'], { 'copdem30m.elevation_mean': slow(1500, value) })] });
    try {
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const inFlight = fetch(`${base}/v1/recall`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cell: P.cellOf(3, 4), bands: ['copdem30m.elevation_mean'] }),
      }).then(
        (r) => r.status,
        () => 'connection error',
      );
      await new Promise((r) => setTimeout(r, 100));
      const { forced } = await drain(t.app, 200);
      assert.equal(forced, true);
      assert.equal(await inFlight, 'connection error');
    } finally {
      await t.close();
    }
  });
});
