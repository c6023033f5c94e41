/** Serves /verify and /verify/<fact_cid>: a static page plus the protocol module bundled for the browser. */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { isFactCid } from '../protocol/cid.js';
import { SvcError } from '../protocol/errors.js';

let bundle: Promise<string> | undefined;

/** The page script with the protocol module, bundled once per process (≈ 100 ms). */
export function verifierBundle(): Promise<string> {
  bundle ??= build({
    entryPoints: [fileURLToPath(new URL('./verify-app.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  }).then((r) => r.outputFiles[0].text);
  return bundle;
}

function page(prefix: string, factCid?: string): string {
  const cfg = JSON.stringify({ prefix, fact_cid: factCid ?? null }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${prefix} — verify a response</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>
body{font:15px/1.4 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
textarea{width:100%;height:16em;font:12px monospace}input{width:100%;font:13px monospace}
button{font-size:15px;padding:.4em 1.2em;margin:.6em 0}table{border-collapse:collapse;width:100%;font-size:13px}
td{border-bottom:1px solid #ddd;padding:3px 6px;vertical-align:top;word-break:break-all}
.na{color:#666;font-size:12px}h2{font-size:17px;margin:1.2em 0 .3em}th{text-align:left;font-weight:600;font-size:12px}.ok{color:#16651f}.bad{color:#a31212}#verdict{font-size:28px;font-weight:700}code{font-size:12px}
#preimage{font:11px monospace;word-break:break-all;color:#555}
</style></head><body>
<h1>Verify a response</h1>
<p>Everything below runs in your browser with the published rules (<a href="/v1/verifier_spec">/v1/verifier_spec</a>): BLAKE3 over the
preimage, strict Ed25519 against the public key in the box, every fact's fact_cid recomputed from its body and matched to a
receipt that binds it, and what the response shows beside its facts (an ask answer, hunt hotspots, search results) checked
against them. The server is not asked for a verdict.</p>
<label>Responder public key (b32)<input id="pubkey" autocomplete="off"></label>
<label>Prefix word<input id="prefix" value="${prefix}"></label>
<label>A saved response (recall, recall_many, fetch, ask, hunt, memory search, a shortcut, …) or a bare receipt<textarea id="receipt" spellcheck="false"></textarea></label>
<button id="verify">Verify</button>
<div id="result"></div>
<details><summary>Preimage (hex)</summary><p id="preimage"></p></details>
<script type="application/json" id="config">${cfg}</script>
<script type="module" src="/verify/app.js"></script>
</body></html>`;
}

export async function verifyPageRoutes(app: FastifyInstance, prefix: string): Promise<void> {
  app.get('/verify', { schema: { summary: 'Browser verifier page (HTML)', tags: ['verify'] } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(page(prefix)));
  app.get('/verify/app.js', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(await verifierBundle()),
  );
  app.get<{ Params: { cid: string } }>(
    '/verify/:cid',
    {
      schema: { summary: "Browser verifier page for one fact's receipt", tags: ['verify'], params: { type: 'object', properties: { cid: { type: 'string', maxLength: 60 } }, required: ['cid'] } },
    },
    async (req, reply) => {
      if (!isFactCid(req.params.cid)) throw new SvcError('invalid_argument', 'fact_cid: expected 52 lowercase base32 characters', { field: 'fact_cid' });
      return reply.type('text/html; charset=utf-8').send(page(prefix, req.params.cid));
    },
  );
}
