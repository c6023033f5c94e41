/**
 * Framework and protocol errors stay in the envelope (issue 13, item 11). The probe found
 * FST_ERR_BAD_URL on `%ff%fe`, FST_ERR_MAX_PARAM_LENGTH on a long path parameter and a 413 whose
 * message lacked its number. Each request here is written byte for byte on a socket (app.inject
 * would normalise the URL and skip Node's parser): whatever the request line, headers, content
 * type or method, the answer is the part-7 envelope with a catalogued code, never `internal`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { buildApp } from '../../src/api/app.js';
import { toSvcError } from '../../src/api/errors.js';
import { errorCatalogueDocument } from '../../src/protocol/errors.js';
import { build, type TestApp } from '../support/app.js';

const CODES = new Set(errorCatalogueDocument().codes.map((c: { code: string }) => c.code));
const BODY_LIMIT = 2048;
let t: TestApp;
let port: number;

before(async () => {
  t = await build({ bodyLimitBytes: BODY_LIMIT }, {}, { materializers: [] });
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
after(async () => t.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `text` as is and reads until the server closes (or 2 s pass); parses the first answer. */
function raw(text: string | Buffer, to = port): Promise<RawAnswer & { all: string }> {
  return new Promise((res, rej) => {
    const s = net.connect(to, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => s.destroy(), 2000);
    s.on('data', (d) => chunks.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3}) [^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(all);
      if (!m) return rej(new Error(`no HTTP answer: ${JSON.stringify(all.slice(0, 200))}`));
      const headers: Record<string, string> = {};
      for (const line of m[2].split('\r\n')) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      const len = Number(headers['content-length'] ?? m[3].length);
      res({ status: Number(m[1]), headers, body: Buffer.from(m[3]).subarray(0, len).toString('utf8'), all });
    });
    s.write(text);
  });
}

/** The answer is the envelope with a catalogued code (and the expected one, when given). */
function assertEnvelope(label: string, a: RawAnswer, status: number, code: string, path?: string): any {
  assert.equal(a.status, status, `${label}: ${a.status} ${a.body.slice(0, 300)}`);
  assert.match(a.headers['content-type'] ?? '', /^application\/json/, `${label}: content-type`);
  let env: any;
  try {
    env = JSON.parse(a.body);
  } catch {
    assert.fail(`${label}: body is not JSON: ${a.body.slice(0, 200)}`);
  }
  assert.equal(env.schema, 'svc.error.v1', `${label}: ${a.body.slice(0, 300)}`);
  assert.ok(CODES.has(env.code), `${label}: ${env.code} is catalogued`);
  assert.equal(env.code, code, `${label}: ${a.body.slice(0, 300)}`);
  assert.equal(typeof env.message, 'string');
  assert.equal(typeof env.details, 'object');
  if (path !== undefined) assert.equal(env.path, path, label);
  return env;
}

const H = 'Host: 127.0.0.1\r\nConnection: close\r\n';
const JSON_POST = (extra: string, body: string) => `POST /v1/recall HTTP/1.1\r\n${H}${extra}\r\n${body}`;
const chunk = (n: number) => `${n.toString(16)}\r\n${'a'.repeat(n)}\r\n`;

/** [label, request bytes, status, code]: every malformed shape the probe or this review thought of. */
const CASES: Array<[string, string, number, string]> = [
  // The three the probe reported.
  ['bad percent-escape in a path parameter (FST_ERR_BAD_URL)', `GET /v1/cells/%ff%fe HTTP/1.1\r\n${H}\r\n`, 400, 'invalid_argument'],
  ['bad percent-escape on an unknown route', `GET /%ff HTTP/1.1\r\n${H}\r\n`, 400, 'invalid_argument'],
  ['path parameter over the cap (FST_ERR_MAX_PARAM_LENGTH)', `GET /v1/cells/${'a'.repeat(300)} HTTP/1.1\r\n${H}\r\n`, 414, 'invalid_argument'],
  ['Content-Length over the body cap', JSON_POST('Content-Type: application/json\r\nContent-Length: 99999999\r\n', '{}'), 413, 'payload_too_large'],
  ['chunked body growing past the cap', JSON_POST('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n', `${chunk(1000)}${chunk(1000)}${chunk(1000)}0\r\n\r\n`), 413, 'payload_too_large'],
  // Request lines Node's parser refuses.
  ['unknown method', `FOO /health HTTP/1.1\r\n${H}\r\n`, 400, 'invalid_argument'],
  ['lower-case method', `get /health HTTP/1.1\r\n${H}\r\n`, 400, 'invalid_argument'],
  ['binary garbage', '\x00\x01\x02 lol\r\n\r\n', 400, 'invalid_argument'],
  ['a TLS ClientHello on the plain port', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', 400, 'invalid_argument'],
  ['HTTP/2 preface on an HTTP/1.1 port', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400, 'invalid_argument'],
  ['unknown HTTP version', `GET /health HTTP/9.9\r\n${H}\r\n`, 400, 'invalid_argument'],
  ['space inside the target', `GET /a b HTTP/1.1\r\n${H}\r\n`, 400, 'invalid_argument'],
  ['bare LF line endings', 'GET /health HTTP/1.1\nHost: x\nConnection: close\n\n', 400, 'invalid_argument'],
  ['request line over the header cap', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\n${H}\r\n`, 431, 'invalid_argument'],
  ['CONNECT (no proxy here)', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 400, 'invalid_argument'],
  // Headers.
  ['no Host on HTTP/1.1', 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'invalid_argument'],
  ['space in a header name', `GET /health HTTP/1.1\r\n${H}Bad Header: x\r\n\r\n`, 400, 'invalid_argument'],
  ['obsolete line folding', `GET /health HTTP/1.1\r\n${H}X-A: a\r\n b\r\n\r\n`, 400, 'invalid_argument'],
  ['NUL in a header value', `GET /health HTTP/1.1\r\n${H}X-A: a\x00b\r\n\r\n`, 400, 'invalid_argument'],
  ['headers over the cap', `GET /health HTTP/1.1\r\n${H}X-A: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'invalid_argument'],
  ['Expect other than 100-continue', JSON_POST('Content-Type: application/json\r\nExpect: 100-banana\r\nContent-Length: 2\r\n', '{}'), 417, 'invalid_argument'],
  // Body framing.
  ['Content-Length with Transfer-Encoding', JSON_POST('Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'), 400, 'invalid_argument'],
  ['two different Content-Lengths', JSON_POST('Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n', '{}'), 400, 'invalid_argument'],
  ['Content-Length not a number', JSON_POST('Content-Type: application/json\r\nContent-Length: abc\r\n', '{}'), 400, 'invalid_argument'],
  ['Transfer-Encoding other than chunked', JSON_POST('Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n', '{}'), 400, 'invalid_argument'],
  ['bad chunk size', JSON_POST('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n', 'zz\r\nab\r\n0\r\n\r\n'), 400, 'invalid_argument'],
  // Content types and bodies.
  ['application/xml', JSON_POST('Content-Type: application/xml\r\nContent-Length: 2\r\n', '{}'), 415, 'invalid_argument'],
  ['unparseable content-type', JSON_POST('Content-Type: ;;;\r\nContent-Length: 2\r\n', '{}'), 415, 'invalid_argument'],
  ['no content-type with a body', JSON_POST('Content-Length: 2\r\n', '{}'), 415, 'invalid_argument'],
  ['form-encoded body', JSON_POST('Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n', 'a=b'), 415, 'invalid_argument'],
  ['multipart body', JSON_POST('Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 2\r\n', '{}'), 415, 'invalid_argument'],
  ['invalid JSON', JSON_POST('Content-Type: application/json\r\nContent-Length: 2\r\n', '{x'), 400, 'invalid_argument'],
  ['empty JSON body', JSON_POST('Content-Type: application/json\r\nContent-Length: 0\r\n', ''), 400, 'invalid_argument'],
  ['__proto__ in JSON', JSON_POST('Content-Type: application/json\r\nContent-Length: 27\r\n', '{"__proto__":{"x":1},"a":1}'), 400, 'invalid_argument'],
  ['constructor.prototype in JSON', JSON_POST('Content-Type: application/json\r\nContent-Length: 37\r\n', '{"constructor":{"prototype":{"x":1}}}'), 400, 'invalid_argument'],
  // Methods and targets the router does not serve.
  ['PROPFIND', `PROPFIND /health HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
  ['DELETE on a GET route', `DELETE /v1/limits HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
  ['TRACE', `TRACE /health HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
  ['OPTIONS *', `OPTIONS * HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
  ['absolute-form target of an unknown route', `GET http://elsewhere/v1/nope HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
  ['dot segments', `GET /../../etc/passwd HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
];

describe('framework and protocol errors answer the part-7 envelope (raw HTTP)', () => {
  for (const [label, request, status, code] of CASES) {
    it(`${label} → ${status} ${code}`, async () => {
      assertEnvelope(label, await raw(request), status, code);
    });
  }

  it("the probe's three, in detail: field named, path kept, the cap's number in the 413", async () => {
    const bad = assertEnvelope('bad url', await raw(`GET /v1/cells/%ff%fe HTTP/1.1\r\n${H}\r\n`), 400, 'invalid_argument', '/v1/cells/%ff%fe');
    assert.equal(bad.details.field, 'path');
    const long = assertEnvelope('long param', await raw(`GET /v1/cells/${'a'.repeat(300)} HTTP/1.1\r\n${H}\r\n`), 414, 'invalid_argument');
    assert.equal(long.details.max_chars, 100);
    for (const req of [CASES[3][1], CASES[4][1]]) {
      const big = assertEnvelope('413', await raw(req), 413, 'payload_too_large', '/v1/recall');
      assert.match(big.message, new RegExp(`\\b${BODY_LIMIT}\\b`), big.message);
      assert.equal(big.details.limit_bytes, BODY_LIMIT);
    }
  });

  it('what stays allowed: HTTP/1.0 without Host, an Upgrade nobody accepts, a GET with a body', async () => {
    assert.equal((await raw('GET /health HTTP/1.0\r\n\r\n')).status, 200);
    assert.equal((await raw(`GET /health HTTP/1.1\r\n${H.replace('close', 'Upgrade')}Upgrade: websocket\r\n\r\n`)).status, 200);
    assert.equal((await raw(`GET /health HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`)).status, 200);
  });

  it('a malformed request pipelined after a good one: the good one is answered, then the envelope', async () => {
    const a = await raw(`GET /health HTTP/1.1\r\nHost: x\r\n\r\nFOO / HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(a.status, 200);
    const second = a.all.slice(a.all.indexOf('HTTP/1.1', 10));
    assert.match(second, /^HTTP\/1\.1 400 /);
    assert.equal(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)).code, 'invalid_argument');
  });

  it("a fastify error this table does not name yet is still catalogued by its status; another library's status is not trusted", () => {
    const err = (code: string, statusCode: number) => Object.assign(new Error('m'), { code, statusCode });
    const pick = (e: unknown) => [toSvcError(e).code, toSvcError(e).httpStatus];
    assert.deepEqual(pick(err('FST_ERR_SOMETHING_NEW', 406)), ['invalid_argument', 406]);
    assert.deepEqual(pick(err('FST_ERR_SOMETHING_NEW', 404)), ['not_found', 404]);
    assert.deepEqual(pick(err('FST_ERR_SOMETHING_NEW', 413)), ['payload_too_large', 413]);
    assert.deepEqual(pick(err('FST_ERR_SOMETHING_NEW', 500)), ['internal', 500]);
    assert.deepEqual(pick(err('ESOMEDRIVER', 404)), ['internal', 500]);
  });

  it('a long unknown path is not echoed whole in the message (no amplification)', async () => {
    const a = await raw(`GET /${'a'.repeat(10_000)} HTTP/1.1\r\n${H}\r\n`);
    const env = assertEnvelope('long 404', a, 404, 'not_found');
    assert.ok(env.message.length < 300, `${env.message.length} characters`);
  });

  it("while shutting down: 503 overloaded with Retry-After, not fastify's own 503", async () => {
    const own = await build({}, {}, { materializers: [] });
    await own.app.close();
    // A second app over the same service, with a slow preClose so a request lands while it closes.
    const app = await buildApp(own.service);
    let release!: () => void;
    app.addHook('preClose', (done) => {
      release = done;
    });
    const p = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
    // A kept-alive socket opened before close begins (new connections are refused once it has).
    const s = net.connect(p, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    const closing = app.close();
    await new Promise((r) => setTimeout(r, 50));
    const answer = new Promise<string>((r) => {
      let out = '';
      s.on('data', (d) => {
        out += d;
        if (out.includes('}')) r(out);
      });
    });
    s.write(`GET /v1/limits HTTP/1.1\r\nHost: x\r\n\r\n`);
    const text = await answer;
    s.destroy();
    release();
    await closing;
    await own.close();
    assert.match(text, /^HTTP\/1\.1 503 /);
    assert.match(text, /\r\nretry-after: 1\r\n/i);
    const env = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    assert.equal(env.code, 'overloaded');
    assert.equal(env.retry_after, 1);
  });
});
