import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';

let t: TestApp;
let port: number;
before(async () => {
  t = await build();
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = Number(new URL(url).port);
});
after(async () => t.close());

describe('GET /v1/stream', () => {
  it('sends a signed corpus.state tick at once, and a disconnect releases the stream', async () => {
    const first = await new Promise<{ event: string; data: any }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/v1/stream?interval_s=5' }, (res) => {
        assert.equal(res.headers['content-type'], 'text/event-stream');
        let buf = '';
        res.on('data', (c) => {
          buf += c;
          const m = /event: corpus\.state\ndata: (.*)\n\n/.exec(buf);
          if (m) {
            resolve({ event: 'corpus.state', data: JSON.parse(m[1]) });
            req.destroy();
          }
        });
      });
      req.on('error', (e) => ((e as any).code === 'ECONNRESET' ? undefined : reject(e)));
      req.end();
    });
    assert.equal(first.data.receipt.primitive, 'svc.corpus_state_stats');
    assert.ok(P.verifyReceipt(first.data.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
    const streams = (t.app as any).streams;
    for (let i = 0; i < 50 && streams.active > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(streams.active, 0);
  });
  it('refuses an interval outside 5..300', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/stream?interval_s=2' });
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().code, 'invalid_argument');
  });
});
