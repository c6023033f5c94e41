/**
 * `svc verify`: check a saved response (or a bare receipt) offline — every receipt's signature
 * and proof, every fact's cid recomputed from its body and bound by a covering receipt — and,
 * with `--log`, each fact's place in the transparency log. Exit 0 valid, 1 invalid, 2 unreadable.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { parseCommand, usageError, type CommandSpec } from './cli-args.js';
import { nodeEd25519 } from './crypto/node-ed25519.js';
import { verifyResponse, type FactReport, type ResponseVerdict } from './protocol/verify-response.js';
import { verifyFactInLog, verifyTreeHead, type LogEvidence, type LogPlacement, type TreeHeadVerdict } from './protocol/verify-log.js';
import type { SignedTreeHead } from './protocol/tree-head.js';

export const VERIFY_USAGE = `usage: svc verify <response.json|receipt.json|-> [options]

Checks a saved svc response offline: each receipt's Ed25519 signature (strict) and merkle
proof, each fact's fact_cid recomputed from its body, and that a covering receipt binds it
and names its cell. Accepts any response that carries receipts, or a bare receipt.

options:
  --pubkey <b32>        require every receipt to be signed by this responder key
  --retired <b32>       with --pubkey: also accept this retired key of the same responder
                        (repeatable; /.well-known/svc.json lists them under retired_keys), for
                        responses signed before a key rotation
  --prefix <word>       prefix word of signed preimages (default svc)
  --json                print the per-item report as JSON
  --log <url|file>      also prove each fact's log position: a responder base URL (fetches the
                        signed tree head, entries and inclusion proofs) or an evidence file
                        written earlier with --save-log
  --save-log <file>     with --log <url>: write the fetched log evidence for offline use
  -h, --help            print this and exit 0

exit status: 0 valid, 1 invalid (or signed by another key than --pubkey), 2 unreadable input
or a usage error`;

export const VERIFY_SPEC: CommandSpec = {
  name: 'verify',
  usage: VERIFY_USAGE,
  options: {
    pubkey: { type: 'string' },
    retired: { type: 'string', multiple: true },
    prefix: { type: 'string', default: 'svc' },
    json: { type: 'boolean', default: false },
    log: { type: 'string' },
    'save-log': { type: 'string' },
  },
  positionals: { min: 1, max: 1, names: ['<response.json|receipt.json|->'] },
};

interface Options {
  file: string;
  pubkey?: string;
  retired: string[];
  prefix: string;
  json: boolean;
  log?: string;
  saveLog?: string;
}

/** The options of a run, or the exit status when help was shown or the arguments were refused. */
function parseOptions(args: string[]): Options | number {
  const p = parseCommand(VERIFY_SPEC, args);
  if (!p.run) return p.code;
  const v = p.values as unknown as { pubkey?: string; retired?: string[]; prefix: string; json: boolean; log?: string; 'save-log'?: string };
  if (v.pubkey === '') return usageError(VERIFY_SPEC, '--pubkey needs a key');
  if (v.retired?.length && v.pubkey === undefined) return usageError(VERIFY_SPEC, '--retired needs --pubkey (the current key it is retired from)');
  if (v.retired?.some((k) => k === '')) return usageError(VERIFY_SPEC, '--retired needs a key');
  if (v.log === '') return usageError(VERIFY_SPEC, '--log needs a URL or a file');
  // A data directory's log is checked whole by another command; reading it as a file would fail with EISDIR.
  if (v.log !== undefined && !/^https?:\/\//.test(v.log) && statSync(v.log, { throwIfNoEntry: false })?.isDirectory()) {
    return usageError(
      VERIFY_SPEC,
      `--log ${v.log} is a directory: check a whole log directory with \`svc log verify ${v.log}\`; --log takes a responder URL or an evidence file written with --save-log`,
    );
  }
  if (v['save-log'] === '') return usageError(VERIFY_SPEC, '--save-log needs a file');
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(v.prefix)) return usageError(VERIFY_SPEC, `--prefix: expected a short lowercase word, got ${JSON.stringify(v.prefix)}`);
  return { file: p.positionals[0], pubkey: v.pubkey, retired: v.retired ?? [], prefix: v.prefix, json: v.json, log: v.log, saveLog: v['save-log'] };
}

async function getJson(url: string): Promise<any> {
  const r = await fetch(url, { headers: { accept: 'application/json' } });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
}

/** Fetch the tree head, then each needed entry and its inclusion proof at that head. */
async function fetchEvidence(base: string, indices: number[]): Promise<LogEvidence> {
  const root = base.replace(/\/+$/, '');
  const sth = (await getJson(`${root}/v1/log/sth`)) as SignedTreeHead;
  const ev: LogEvidence = {
    sth: { tree_size: sth.tree_size, root: sth.root, signed_at: sth.signed_at, responder: sth.responder, responder_key_epoch: sth.responder_key_epoch, signature: sth.signature },
    entries: {},
    inclusions: {},
  };
  for (const i of indices) {
    const e = await getJson(`${root}/v1/log/entries/${i}`);
    const p = await getJson(`${root}/v1/log/inclusion?index=${i}&tree_size=${sth.tree_size}`);
    ev.entries[i] = e.private === true ? { private: true } : { cbor_hex: e.cbor_hex };
    ev.inclusions[i] = { tree_size: p.tree_size, path: p.path };
  }
  return ev;
}

interface LogReport {
  tree_head: TreeHeadVerdict & { tree_size: number };
  placements: LogPlacement[];
  unplaced: string[];
}

async function checkLog(v: ResponseVerdict, o: Options): Promise<LogReport> {
  const placed = v.facts.filter((f) => f.meta?.log_index !== undefined);
  const indices = [...new Set(placed.map((f) => f.meta!.log_index!))].sort((a, b) => a - b);
  let ev: LogEvidence;
  if (/^https?:\/\//.test(o.log!)) {
    ev = await fetchEvidence(o.log!, indices);
    if (o.saveLog) writeFileSync(o.saveLog, JSON.stringify(ev, null, 1) + '\n');
  } else {
    ev = JSON.parse(readFileSync(o.log!, 'utf8')) as LogEvidence;
  }
  const head = verifyTreeHead(ev.sth, { publicKey: o.pubkey, prefix: o.prefix, backend: nodeEd25519 });
  return {
    tree_head: { ...head, tree_size: ev.sth.tree_size },
    placements: placed.map((f) => verifyFactInLog({ fact_cid: f.fact_cid, batch_root: f.batch_root ?? undefined, attester: f.meta?.attester }, f.meta!.log_index!, ev)),
    unplaced: v.facts.filter((f) => f.meta?.log_index === undefined).map((f) => f.fact_cid),
  };
}

function factLine(f: FactReport): string {
  const mark = f.ok ? 'ok ' : 'BAD';
  const who = f.meta?.attester ? ` · signed by ${f.meta.attester_role ?? 'attester'} ${f.meta.attester.slice(0, 12)}…` : '';
  const where = f.meta?.log_index !== undefined ? ` · log #${f.meta.log_index}` : '';
  const unit = f.unit ?? f.meta?.declared_unit ?? '';
  return `  ${mark} ${String(f.band)} @ ${String(f.cell)} tslot ${String(f.tslot ?? '—')}: ${JSON.stringify(f.value)?.slice(0, 60)} ${String(unit)}${who}${where}`;
}

/** The verdict as `svc verify` prints it (also `svc fetch`). */
export function print(v: ResponseVerdict, log: LogReport | undefined, o: Pick<Options, 'pubkey'>): void {
  const ok = v.valid && v.trusted && (!log || (log.tree_head.ok && log.placements.every((p) => p.ok)));
  const signers = v.signers.join(', ') || '—';
  console.log(
    `${ok ? 'valid' : 'INVALID'}: ${v.receipts.length} receipt(s), ${v.facts.length} fact(s), ${v.references.length} reference(s); signed by ${signers}${o.pubkey ? (v.trusted ? ' (the pinned key)' : '') : ' (key not pinned: pass --pubkey to require it)'}`,
  );
  for (const f of v.facts) console.log(factLine(f));
  if (log) {
    console.log(
      `  log: tree head of size ${log.tree_head.tree_size} ${log.tree_head.ok ? 'verifies' : 'does NOT verify'}; ${log.placements.filter((p) => p.ok).length}/${log.placements.length} fact(s) placed${log.unplaced.length ? `, ${log.unplaced.length} without a log_index shown` : ''}`,
    );
  }
  const errors = [...v.errors, ...(log?.tree_head.errors ?? []), ...(log?.placements.flatMap((p) => p.errors) ?? [])];
  if (errors.length > 0) console.log(`  ${errors.slice(0, 50).join('\n  ')}${errors.length > 50 ? `\n  … ${errors.length - 50} more (--json lists all)` : ''}`);
  for (const u of v.unsigned) console.log(`  note: ${u}`);
}

/** Run `svc verify`; returns the exit status. */
export async function verifyCommand(args: string[]): Promise<number> {
  const o = parseOptions(args);
  if (typeof o === 'number') return o;
  let doc: unknown;
  try {
    doc = JSON.parse(o.file === '-' ? readFileSync(0, 'utf8') : readFileSync(o.file, 'utf8'));
  } catch (e) {
    console.error(`unreadable input: ${(e as Error).message}`);
    return 2;
  }
  const v = verifyResponse(doc, { publicKey: o.pubkey, trustedKeys: o.retired, prefix: o.prefix, backend: nodeEd25519 });
  // Nothing to check at all (no receipt, or a bare receipt that is not one) is unreadable, not invalid.
  if (v.failures.includes('no_receipt') || (v.bare_receipt && v.failures.includes('malformed'))) {
    if (o.json) console.log(JSON.stringify(v, null, 1));
    else console.error(`unreadable: ${v.errors.join('\n  ')}`);
    return 2;
  }
  let log: LogReport | undefined;
  if (o.log) {
    try {
      log = await checkLog(v, o);
    } catch (e) {
      console.error(`log evidence unreadable: ${(e as Error).message}`);
      return 2;
    }
  }
  if (o.json) console.log(JSON.stringify({ ...v, log }, null, 1));
  else print(v, log, o);
  const ok = v.valid && v.trusted && (!log || (log.tree_head.ok && log.placements.every((p) => p.ok)));
  return ok ? 0 : 1;
}
