/**
 * The writer's commands: `svc keygen --attester` (an attester key file, cli-keyfile.ts), `svc
 * attest` (sign a batch of facts with it and post it), `svc bearer` (a read bearer for a private
 * scope, docs/scopes.md) and `svc fetch` (one fact by fact_cid, verified offline the way `svc
 * verify` checks a saved response). They talk to a responder over HTTP only, so they run on any
 * machine that holds the key; nothing here reads SVC_DATA.
 *
 * Exit status of attest, bearer and fetch: 0 done (for fetch: the answer verifies), 1 the answer
 * does not verify (fetch), 2 a usage error or unreadable local input (facts file, key file), 3
 * the responder refused the request (its error code and message are printed) or could not be
 * reached.
 */
import { readFileSync } from 'node:fs';
import { parseCommand, usageError, type CommandSpec } from './cli-args.js';
import { KeyFileError, newKeyFile, readKeyFile, writeKeyFile } from './cli-keyfile.js';
import { print } from './cli-verify.js';
import { nodeEd25519 } from './crypto/node-ed25519.js';
import * as P from './protocol/index.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';
/** The answer does not verify (fetch). */
const INVALID = 1;
/** Unreadable local input (a usage error is cli-args.ts's USAGE_ERROR, also 2). */
const UNREADABLE = 2;
/** The responder refused, or could not be reached. */
const REFUSED = 3;

const EXIT_STATUS = `exit status: 0 done, 2 a usage error or unreadable input (facts or key file), 3 the
responder refused (its error code and message are printed) or could not be reached`;

// ---------------------------------------------------------------------------------------------
// HTTP

/** A typed refusal of the responder (docs/errors.md), or a failure to reach it. */
class Refusal extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface Answer {
  body: any;
  /** The responder's clock from its Date header (ms), when it sent one. */
  date: number | null;
}

function endpoint(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

/** One request to the responder: its JSON answer, or a Refusal for an error or no answer. */
async function call(base: string, path: string, init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = endpoint(base, path);
  let res: Response;
  try {
    const body = init.body instanceof Uint8Array ? Buffer.from(init.body) : init.body;
    res = await fetch(url, { method: init.method ?? 'GET', body, headers: { accept: 'application/json', ...init.headers }, signal: AbortSignal.timeout(120_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Refusal(`cannot reach ${base} (${init.method ?? 'GET'} ${path}): ${cause?.code ?? cause?.message ?? (e as Error).message}`, null, null);
  }
  const text = await res.text();
  let body: any;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    if (body && typeof body.code === 'string' && typeof body.message === 'string') throw new Refusal(body.message, res.status, body.code, body.details);
    throw new Refusal(`${url}: HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`, res.status, null);
  }
  if (body === undefined) throw new Refusal(`${url}: the answer is not JSON`, res.status, null);
  const date = res.headers.get('date');
  return { body, date: date && Number.isFinite(Date.parse(date)) ? Date.parse(date) : null };
}

/** Print a refusal on stderr (code, HTTP status, message, hint); the exit status. */
function refused(cmd: string, e: Refusal): number {
  if (e.code) {
    console.error(`svc ${cmd}: ${e.code} (HTTP ${e.status}): ${e.message}`);
    const hint = e.details?.hint;
    if (typeof hint === 'string') console.error(`  hint: ${hint}`);
    else if (e.code === 'unauthorized' && e.status === 403 && e.details?.field === 'attester') {
      console.error("  hint: the responder's operator lists the key in SVC_ATTESTER_KEYS (see `svc keygen --attester`), or it is enrolled as a device (docs/devices.md)");
    }
  } else {
    console.error(`svc ${cmd}: ${e.message}`);
  }
  return REFUSED;
}

/** Run `body`, turning a Refusal or a KeyFileError into its message and exit status. */
async function guarded(cmd: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof Refusal) return refused(cmd, e);
    if (e instanceof KeyFileError) {
      console.error(`svc ${cmd}: ${e.message}`);
      return UNREADABLE;
    }
    throw e;
  }
}

function urlOption(spec: CommandSpec, v: unknown): string | number {
  const url = (v as string | undefined) ?? DEFAULT_URL;
  if (!/^https?:\/\/[^/]/.test(url)) return usageError(spec, `--url: expected an http(s) base URL, got ${JSON.stringify(url)}`);
  return url;
}

// ---------------------------------------------------------------------------------------------
// svc keygen --attester

export const DEFAULT_KEY_FILE = 'attester-key.json';

/** `svc keygen --attester [--out <file>] [--force] [--json]`; the exit status. */
export function attesterKeygen(spec: CommandSpec, v: { out?: string; force?: boolean; json?: boolean }): number {
  const path = v.out ?? DEFAULT_KEY_FILE;
  if (path === '') return usageError(spec, '--out needs a file name');
  const file = newKeyFile();
  try {
    writeKeyFile(path, file, v.force === true);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      console.error(`svc keygen: ${path} already exists; it was left as it is (pass --force to replace it with a new key, which loses the old one)`);
    } else {
      console.error(`svc keygen: cannot write ${path}: ${(e as Error).message}`);
    }
    return UNREADABLE;
  }
  const enrol = {
    operator: `add ${file.public_key} to SVC_ATTESTER_KEYS (comma-separated) in the responder's environment and restart it`,
    device: 'or have an operator-listed key vouch for it as a device: POST /v1/device_platforms with platform operator_vouched (docs/devices.md); no restart',
  };
  if (v.json) {
    console.log(JSON.stringify({ created: true, path, public_key: file.public_key, created_at: file.created_at, mode: '0600', enrol }));
    return 0;
  }
  console.log(`created attester key ${path} (mode 0600)
public key: ${file.public_key}

The responder accepts this key's writes once its operator lists it:
  SVC_ATTESTER_KEYS=${file.public_key}   (comma-separated with any keys already listed; then restart)
Or an operator-listed key vouches for it as a device (POST /v1/device_platforms, platform
  operator_vouched; docs/devices.md): no restart needed.
Then: svc attest <facts.json> --key ${path} --url <responder>`);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// svc attest

export const ATTEST_SPEC: CommandSpec = {
  name: 'attest',
  usage: `usage: svc attest <facts.json|-> --key <file> [--url <base>] [--cbor] [--json]

Signs a batch of facts with an attester key and posts it (POST /v1/attest, or /v1/attest_cbor
with --cbor). <facts.json> (or stdin for -) holds a JSON array of facts, or {"facts": [...]}:
each a full fact body ({kind, cell, band, value, tslot?, unit?, signed_at, scope?, …};
docs/writes.md), or {band, value, scope?} for a memory record (memory.note, memory.edge,
memory.alias, device.trace), completed into its body by the subject rule. The batch root over
the facts' canonical CBOR is signed together with the responder's current registry_cid and
schema_cid, read from <base>/v1/manifests. Every fact of a batch has the same scope or none.

Prints each fact_cid and the log index; --json prints the responder's whole answer (with its
receipt, so \`svc verify\` checks it later).

options:
  --key <file>     the attester key file (svc keygen --attester); the key must be listed in the
                   responder's SVC_ATTESTER_KEYS or enrolled as a device
  --url <base>     the responder (default ${DEFAULT_URL})
  --cbor           send the envelope as canonical CBOR to /v1/attest_cbor
  --json           print the answer as JSON
  -h, --help       print this and exit 0

${EXIT_STATUS}`,
  options: {
    key: { type: 'string' },
    url: { type: 'string' },
    cbor: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
  positionals: { min: 1, max: 1, names: ['<facts.json|->'] },
};

/** The facts of a facts file: an array, or {facts: [...]}, completed into bodies. */
function readFacts(file: string): Record<string, unknown>[] {
  const source = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${source}: not found` : `${source}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not JSON (${(e as Error).message})`);
  }
  const items = doc && typeof doc === 'object' && !Array.isArray(doc) && 'facts' in doc ? (doc as { facts: unknown }).facts : doc;
  if (!Array.isArray(items) || items.length === 0) throw new Error(`${source}: expected a non-empty JSON array of facts, or {"facts": [...]}`);
  return P.completeBodies(items, new Date(), source);
}

export async function attestCommand(args: string[]): Promise<number> {
  const p = parseCommand(ATTEST_SPEC, args);
  if (!p.run) return p.code;
  const v = p.values as { key?: string; url?: string; cbor: boolean; json: boolean };
  if (!v.key) return usageError(ATTEST_SPEC, '--key <file> is required');
  const url = urlOption(ATTEST_SPEC, v.url);
  if (typeof url === 'number') return url;
  let facts: Record<string, unknown>[];
  try {
    facts = readFacts(p.positionals[0]);
  } catch (e) {
    console.error(`svc attest: ${(e as Error).message}`);
    return UNREADABLE;
  }
  return guarded('attest', async () => {
    const key = readKeyFile(v.key!);
    const m = (await call(url, '/v1/manifests')).body as { registry_cid?: unknown; schema_cid?: unknown };
    if (typeof m?.registry_cid !== 'string' || typeof m.schema_cid !== 'string') throw new Refusal(`${endpoint(url, '/v1/manifests')} did not name registry_cid and schema_cid`, null, null);
    let envelope: P.AttestEnvelope;
    try {
      envelope = P.signEnvelope(facts, key.seed, m.registry_cid, m.schema_cid);
    } catch (e) {
      // A body the canonical CBOR cannot hold (a non-finite number, …).
      console.error(`svc attest: ${(e as Error).message}`);
      return UNREADABLE;
    }
    const signed = { ...envelope, registry_cid: m.registry_cid, schema_cid: m.schema_cid };
    const answer = v.cbor
      ? await call(url, '/v1/attest_cbor', {
          method: 'POST',
          headers: { 'content-type': 'application/cbor' },
          body: P.encodeCanonical({
            ...signed,
            batch_root: Uint8Array.from(signed.batch_root),
            attester: P.b32decode(signed.attester, 32),
            signature: P.b32decode(signed.signature, 64),
            facts: signed.facts as P.CborValue[],
          }),
        })
      : await call(url, '/v1/attest', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signed) });
    const r = answer.body as { fact_cids: string[]; duplicates?: string[]; log_index: number; batch_root: string; accepted_at: string };
    if (v.json) {
      console.log(JSON.stringify(r));
      return 0;
    }
    const dup = new Set(r.duplicates ?? []);
    console.log(`accepted ${r.fact_cids.length} fact(s) at log index ${r.log_index} (batch root ${r.batch_root}, ${r.accepted_at})${dup.size ? `; ${dup.size} already stored` : ''}`);
    r.fact_cids.forEach((cid, i) => {
      const f = facts[i] ?? {};
      console.log(`  ${cid}  ${String(f.band)} @ ${String(f.cell)}${dup.has(cid) ? '  (already stored)' : ''}`);
    });
    return 0;
  });
}

// ---------------------------------------------------------------------------------------------
// svc bearer

const SCOPE_MEMBERS = ['user_id', 'agent_id', 'run_id', 'org_id'] as const;

export const BEARER_SPEC: CommandSpec = {
  name: 'bearer',
  usage: `usage: svc bearer --scope <k=v[,k=v]> --key <file> [--url <base>] [--ttl <secs>] [--json]

Obtains a read bearer for a private scope (docs/scopes.md, "Reading a scope: the bearer"): signs
the scope_bearer_request statement (the scope, the key, an expiry and the responder's key from
<base>/.well-known/svc.json) with the key and posts it to /v1/scope_bearer. Prints the bearer
(sb1.…) on stdout, for

  curl -H "Authorization: Bearer $(svc bearer --scope agent_id=a1 --key k.json)" …

(the same header works on an MCP request). The key must be bound to the scope: configured for
it in SVC_SCOPE_KEYS, or a listed key that claims it (the first key to write or ask owns it).

options:
  --scope <k=v,…>  the exact scope tuple; members user_id, agent_id, run_id, org_id
                   (also accepted as a JSON object)
  --key <file>     the attester key file (svc keygen --attester)
  --url <base>     the responder (default ${DEFAULT_URL})
  --ttl <secs>     lifetime of the bearer (default and maximum: the responder's
                   SVC_SCOPE_BEARER_TTL_SECS, from /v1/limits)
  --json           print the responder's whole answer (bearer, expires_at, binding, …)
  -h, --help       print this and exit 0

${EXIT_STATUS}`,
  options: {
    scope: { type: 'string' },
    key: { type: 'string' },
    url: { type: 'string' },
    ttl: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
};

/** `agent_id=a1,org_id=acme` (or a JSON object) → a scope; a message when it is not one. */
export function parseScope(text: string): P.Scope | string {
  let entries: [string, unknown][];
  if (text.trim().startsWith('{')) {
    try {
      const o = JSON.parse(text);
      if (!o || typeof o !== 'object' || Array.isArray(o)) return 'expected a JSON object';
      entries = Object.entries(o);
    } catch {
      return 'not JSON';
    }
  } else {
    entries = [];
    for (const part of text.split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) return `expected k=v, got ${JSON.stringify(part)}`;
      entries.push([part.slice(0, eq).trim(), part.slice(eq + 1)]);
    }
  }
  const scope: Record<string, string> = {};
  for (const [k, val] of entries) {
    if (!(SCOPE_MEMBERS as readonly string[]).includes(k)) return `unknown member ${JSON.stringify(k)} (members: ${SCOPE_MEMBERS.join(', ')})`;
    if (k in scope) return `${k} given twice`;
    if (typeof val !== 'string' || val === '') return `${k}: expected a non-empty string`;
    scope[k] = val;
  }
  if (Object.keys(scope).length === 0) return 'expected at least one member';
  return scope;
}

export async function bearerCommand(args: string[]): Promise<number> {
  const p = parseCommand(BEARER_SPEC, args);
  if (!p.run) return p.code;
  const v = p.values as { scope?: string; key?: string; url?: string; ttl?: string; json: boolean };
  if (v.scope === undefined) return usageError(BEARER_SPEC, '--scope <k=v[,k=v]> is required');
  if (!v.key) return usageError(BEARER_SPEC, '--key <file> is required');
  const scope = parseScope(v.scope);
  if (typeof scope === 'string') return usageError(BEARER_SPEC, `--scope: ${scope}`);
  let ttl: number | undefined;
  if (v.ttl !== undefined) {
    ttl = /^\d{1,9}$/.test(v.ttl) ? Number(v.ttl) : Number.NaN;
    if (!(ttl >= 1)) return usageError(BEARER_SPEC, `--ttl: expected a whole number of seconds ≥ 1, got ${JSON.stringify(v.ttl)}`);
  }
  const url = urlOption(BEARER_SPEC, v.url);
  if (typeof url === 'number') return url;
  return guarded('bearer', async () => {
    const key = readKeyFile(v.key!);
    const wk = await call(url, '/.well-known/svc.json');
    const responder = wk.body?.responder_pubkey_b32;
    const prefix = typeof wk.body?.prefix === 'string' ? wk.body.prefix : 'svc';
    if (typeof responder !== 'string') throw new Refusal(`${endpoint(url, '/.well-known/svc.json')} did not name responder_pubkey_b32`, null, null);
    if (ttl === undefined) {
      const limits = (await call(url, '/v1/limits')).body;
      const max = limits?.quotas?.scope_bearer_ttl_s;
      ttl = Number.isSafeInteger(max) && max > 0 ? (max as number) : 300;
    }
    // The expiry is counted from the responder's clock (its Date header), so a client clock that
    // runs ahead cannot push it past the responder's maximum.
    const nowS = Math.floor((wk.date ?? Date.now()) / 1000);
    // A statement is good once: one signed in the same second for the same scope and expiry (a
    // second run within that second) is refused as replayed, so the next earlier second is tried.
    for (let attempt = 0; ; attempt++) {
      const exp = nowS + ttl - attempt;
      const request = P.scopeBearerRequest(scope, key.seed, exp, responder, prefix);
      try {
        const r = await call(url, '/v1/scope_bearer', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
        if (v.json) console.log(JSON.stringify(r.body));
        else {
          console.log(r.body.bearer);
          console.error(`bearer for ${JSON.stringify(r.body.scope)} by ${key.publicKey}, expires ${r.body.expires_at} (${r.body.binding})`);
        }
        return 0;
      } catch (e) {
        if (!(e instanceof Refusal && e.details?.reason === 'replayed' && attempt < 5 && exp - 1 > nowS)) throw e;
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// svc fetch

export const FETCH_SPEC: CommandSpec = {
  name: 'fetch',
  usage: `usage: svc fetch <fact_cid> [--url <base>] [--bearer <sb1.…>] [--pubkey <b32>] [--json]

Fetches one fact by fact_cid (POST /v1/fetch) and verifies the answer offline, as \`svc verify\`
does: the receipt's Ed25519 signature and merkle proof, the fact's body recomputed to its
fact_cid, bound by the receipt — and that the fact is the one asked for. Prints the fact and
the verdict.

options:
  --url <base>     the responder (default ${DEFAULT_URL})
  --bearer <b>     a read bearer (svc bearer) for a fact written in a private scope; without
                   one a scoped fact is cid_not_found, like a fact never stored
  --pubkey <b32>   require the receipt to be signed by this responder key
  --prefix <word>  prefix word of signed preimages (default svc)
  --json           print {ok, fact_cid, answer, verdict} as JSON
  -h, --help       print this and exit 0

exit status: 0 the fact verifies, 1 it does not (or another fact came back, or a key other than
--pubkey signed), 2 a usage error, 3 the responder refused (cid_not_found, unauthorized, …; its
code and message are printed) or could not be reached`,
  options: {
    url: { type: 'string' },
    bearer: { type: 'string' },
    pubkey: { type: 'string' },
    prefix: { type: 'string', default: 'svc' },
    json: { type: 'boolean', default: false },
  },
  positionals: { min: 1, max: 1, names: ['<fact_cid>'] },
};

export async function fetchCommand(args: string[]): Promise<number> {
  const p = parseCommand(FETCH_SPEC, args);
  if (!p.run) return p.code;
  const v = p.values as { url?: string; bearer?: string; pubkey?: string; prefix: string; json: boolean };
  const cid = p.positionals[0];
  if (!P.isFactCid(cid)) return usageError(FETCH_SPEC, `${JSON.stringify(cid)} is not a fact_cid (52 base32 characters)`);
  if (v.pubkey === '') return usageError(FETCH_SPEC, '--pubkey needs a key');
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(v.prefix)) return usageError(FETCH_SPEC, `--prefix: expected a short lowercase word, got ${JSON.stringify(v.prefix)}`);
  const bearer = v.bearer?.replace(/^Bearer\s+/i, '').trim();
  if (bearer === '') return usageError(FETCH_SPEC, '--bearer needs a bearer');
  const url = urlOption(FETCH_SPEC, v.url);
  if (typeof url === 'number') return url;
  return guarded('fetch', async () => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const answer = (await call(url, '/v1/fetch', { method: 'POST', headers, body: JSON.stringify({ cid }) })).body;
    const verdict = P.verifyResponse(answer, { publicKey: v.pubkey, prefix: v.prefix, backend: nodeEd25519 });
    // What verifyResponse cannot know: which fact was asked for.
    const problems: string[] = [];
    const fact = answer?.fact as Record<string, unknown> | null | undefined;
    if (!fact || typeof fact !== 'object') problems.push(`asked for ${cid}: the answer holds no fact`);
    else if (fact.fact_cid !== cid) problems.push(`asked for ${cid}: the answer holds ${String(fact.fact_cid)}`);
    else {
      const report = verdict.facts.find((f) => f.fact_cid === cid);
      if (!report) problems.push(`asked for ${cid}: the fact was not checked`);
      else if (report.recomputed_cid !== cid) problems.push(`asked for ${cid}: its body recomputes to ${String(report.recomputed_cid)}`);
    }
    const ok = verdict.valid && verdict.trusted && problems.length === 0;
    if (v.json) {
      console.log(JSON.stringify({ ok, fact_cid: cid, problems, answer, verdict }, null, 1));
    } else {
      if (fact && typeof fact === 'object') {
        const { receipt: _receipt, ...shown } = fact;
        console.log(JSON.stringify(shown, null, 2));
      }
      print({ ...verdict, valid: verdict.valid && problems.length === 0, errors: [...problems, ...verdict.errors] }, undefined, { pubkey: v.pubkey });
    }
    return ok ? 0 : INVALID;
  });
}
