/**
 * `svc agent-key` and `svc sign`: what an agent needs to write records from a shell. agent-key
 * is the older name of `svc keygen --attester` (cli-writer.ts): it makes an Ed25519 key file
 * (mode 0600, format in cli-keyfile.ts) and prints its public key, for the operator to list in
 * SVC_ATTESTER_KEYS; sign reads record bodies (JSON array) on stdin and prints the signed batch
 * envelope that POST /v1/memory/notes, /v1/edges, /v1/entity/alias, /v1/derive and /v1/attest
 * take (`svc attest` signs and posts in one step). Items given as {band, value, scope?} are
 * completed by the subject rule (recordBody); full bodies (with `cell`) are signed as they are
 * (completeBodies and signEnvelope in src/protocol/attest-batch.ts, shared with packages/client).
 * Nothing here talks to the service except to read its manifest CIDs when --url is given.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseCommand, usageError, type CommandSpec } from './cli-args.js';
import { newKeyFile, readKeyFile, writeKeyFile } from './cli-keyfile.js';
import * as P from './protocol/index.js';

export const AGENT_KEY_SPEC: CommandSpec = {
  name: 'agent-key',
  usage: `usage: svc agent-key <file>

The older name of \`svc keygen --attester --out <file>\`, kept as an alias. Creates an attester
key file (Ed25519 seed, mode 0600) at <file> if it does not exist, and prints
{created, path, public_key}; unlike keygen --attester, an existing file is read and its key
printed, never replaced. List the public key in SVC_ATTESTER_KEYS for the responder to accept
the agent's writes.`,
  positionals: { min: 1, max: 1, names: ['<file>'] },
};

export const SIGN_SPEC: CommandSpec = {
  name: 'sign',
  usage: `usage: svc sign --key <file> (--url <base> | --registry-cid <cid> --schema-cid <cid>) < bodies.json

  bodies.json: a JSON array; each item a full fact body, or {band, value, scope?} for a record
  (memory.note, memory.edge, memory.alias, device.trace) filed by the subject rule; prints the
  envelope {batch_root, attester, signature, facts} to POST to the matching endpoint.

options:
  --key <file>            the attester key file (svc keygen --attester)
  --url <base>            a responder base URL: its registry and schema CIDs are read from /v1/manifests
  --registry-cid <cid>    the registry CID to sign under (instead of --url)
  --schema-cid <cid>      the schema CID to sign under (instead of --url)`,
  options: {
    key: { type: 'string' },
    url: { type: 'string' },
    'registry-cid': { type: 'string' },
    'schema-cid': { type: 'string' },
  },
};

export function agentKeyCommand(args: string[]): number {
  const p = parseCommand(AGENT_KEY_SPEC, args);
  if (!p.run) return p.code;
  const path = p.positionals[0];
  if (path === '') return usageError(AGENT_KEY_SPEC, 'the key file name is empty');
  let created = false;
  try {
    if (!existsSync(path)) {
      writeKeyFile(path, newKeyFile(), false);
      created = true;
    }
    console.log(JSON.stringify({ created, path, public_key: readKeyFile(path).publicKey }));
  } catch (e) {
    console.error(`svc agent-key: ${(e as Error).message}`);
    return 2;
  }
  return 0;
}

export async function signCommand(args: string[]): Promise<number> {
  const p = parseCommand(SIGN_SPEC, args);
  if (!p.run) return p.code;
  const keyPath = p.values.key as string | undefined;
  const url = p.values.url as string | undefined;
  let registryCid = p.values['registry-cid'] as string | undefined;
  let schemaCid = p.values['schema-cid'] as string | undefined;
  if (!keyPath) return usageError(SIGN_SPEC, '--key <file> is required');
  if (!url && (!registryCid || !schemaCid)) return usageError(SIGN_SPEC, 'give --url <base>, or both --registry-cid and --schema-cid');
  try {
    if (url) {
      const m = (await (await fetch(new URL('/v1/manifests', url))).json()) as { registry_cid?: string; schema_cid?: string };
      registryCid ??= m.registry_cid;
      schemaCid ??= m.schema_cid;
      if (!registryCid || !schemaCid) throw new Error(`${url}/v1/manifests did not name registry_cid and schema_cid`);
    }
    const { seed } = readKeyFile(keyPath);
    const facts = P.completeBodies(JSON.parse(readFileSync(0, 'utf8')), new Date());
    console.log(JSON.stringify(P.signEnvelope(facts, seed, registryCid!, schemaCid!)));
    return 0;
  } catch (e) {
    console.error(`sign: ${(e as Error).message}`);
    return 2;
  }
}
