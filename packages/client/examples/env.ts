/**
 * What the examples read when run from a shell (`npx tsx packages/client/examples/<name>.ts`):
 *   SVC_URL       the responder (default http://127.0.0.1:8080)
 *   SVC_PUBKEY    the responder key to pin (default: read once from /.well-known/svc.json)
 *   SVC_KEY_FILE  an attester key file (`svc keygen --attester`), for the examples that write;
 *                 its key must be listed in the responder's SVC_ATTESTER_KEYS
 * Only this runner part touches Node; the examples' `main` functions use the client alone.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { AttesterKey } from '../src/index.js';

export interface ExampleEnv {
  url: string;
  publicKey?: string;
  key?: AttesterKey;
}

export function fromEnv(): ExampleEnv {
  const file = process.env.SVC_KEY_FILE;
  return {
    url: process.env.SVC_URL ?? 'http://127.0.0.1:8080',
    publicKey: process.env.SVC_PUBKEY || undefined,
    key: file ? JSON.parse(readFileSync(file, 'utf8')) : undefined,
  };
}

/** Run `main` when `moduleUrl` is the script node was started with; exit 1 on a failure. */
export function runIfMain(moduleUrl: string, main: (env: ExampleEnv) => Promise<unknown>): void {
  if (!process.argv[1] || pathToFileURL(process.argv[1]).href !== moduleUrl) return;
  main(fromEnv()).catch((e) => {
    console.error(`${e?.name ?? 'Error'}: ${e?.message ?? e}`);
    process.exitCode = 1;
  });
}
