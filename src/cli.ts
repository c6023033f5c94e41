/**
 * Command line: `svc serve | keygen | rotate-key | verify <receipt.json> [--pubkey b32] [--prefix w] | log verify [dir]`.
 * verify exits 0 valid, 1 invalid, 2 unreadable input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { ensureKeyFile, loadResponderKeys, rotateResponderKey } from './keys.js';
import { verifyReceipt } from './protocol/receipt.js';
import { nodeEd25519 } from './crypto/node-ed25519.js';

const USAGE = `usage:
  svc serve                         run the responder (PORT, SVC_DATA, … see README)
  svc keygen                        create the responder key in SVC_DATA if missing; print it
  svc rotate-key                    retire the current key (kept published) and start the next epoch
  svc verify <receipt.json|-> [--pubkey <b32>] [--prefix <word>]
                                    verify a receipt offline (exit 0 valid, 1 invalid, 2 unreadable)
  svc log verify [<log dir>]        check a whole transparency log offline (default SVC_DATA/log)`;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
}

/** Pick the receipt out of a file: a bare receipt, or any response carrying one at `receipt`. */
export function receiptFrom(doc: unknown): unknown {
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    const o = doc as Record<string, unknown>;
    if (!('signature' in o) && o.receipt && typeof o.receipt === 'object') return o.receipt;
  }
  return doc;
}

async function verifyCommand(args: string[]): Promise<number> {
  const pubkey = flag(args, '--pubkey');
  const prefix = flag(args, '--prefix') ?? 'svc';
  const file = args[0];
  if (!file) {
    console.error(USAGE);
    return 2;
  }
  let doc: unknown;
  try {
    const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
    doc = JSON.parse(text);
  } catch (e) {
    console.error(`unreadable input: ${(e as Error).message}`);
    return 2;
  }
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(prefix)) {
    console.error(`--prefix: expected a short lowercase word, got ${prefix}`);
    return 2;
  }
  const v = verifyReceipt(receiptFrom(doc), { publicKey: pubkey, prefix, backend: nodeEd25519 });
  if (v.failures.includes('malformed')) {
    console.error(`unreadable receipt:\n  ${v.errors.join('\n  ')}`);
    return 2;
  }
  if (v.valid && v.trusted) {
    console.log(`valid: preimage v${v.preimage_version}, signed by ${v.signer}${pubkey ? ' (the pinned key)' : ' (key not pinned: pass --pubkey to require it)'}`);
    return 0;
  }
  console.log(`INVALID (v${v.preimage_version}, signer ${v.signer}):\n  ${v.errors.join('\n  ')}`);
  return 1;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'serve': {
        const { startServer, closeOnSignals } = await import('./server.js');
        const server = await startServer(loadConfig());
        closeOnSignals(server);
        return -1; // keep running
      }
      case 'keygen': {
        const cfg = loadConfig();
        const created = ensureKeyFile(cfg.dataDir);
        const k = loadResponderKeys(cfg.dataDir);
        console.log(JSON.stringify({ created, public_key: k.publicKeyB32, epoch: k.epoch, path: join(cfg.dataDir, 'keys', 'responder.json') }));
        return 0;
      }
      case 'rotate-key': {
        const cfg = loadConfig();
        console.log(JSON.stringify(rotateResponderKey(cfg.dataDir)));
        return 0;
      }
      case 'verify':
        return await verifyCommand(rest);
      case 'log': {
        if (rest[0] !== 'verify') break;
        const { verifyLogDir } = await import('./store/log/disk-log.js');
        const dir = rest[1] ?? join(loadConfig().dataDir, 'log');
        const r = await verifyLogDir(dir);
        console.log(JSON.stringify(r, null, 2));
        return r.ok ? 0 : 1;
      }
      case undefined:
      case 'help':
      case '--help':
        console.log(USAGE);
        return 0;
    }
    console.error(USAGE);
    return 2;
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`configuration: ${e.message}`);
      return 2;
    }
    throw e;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
