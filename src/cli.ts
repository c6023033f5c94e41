/**
 * Command line: `svc serve | keygen | rotate-key | verify <response.json> [options] | log verify [dir]
 * | agent-key <file> | sign --key <file> …`.
 * verify exits 0 valid, 1 invalid, 2 unreadable input.
 */
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { ensureKeyFile, loadResponderKeys, rotateResponderKey } from './keys.js';
import { verifyCommand } from './cli-verify.js';
import { agentKeyCommand, signCommand } from './cli-sign.js';

const USAGE = `usage:
  svc serve                         run the responder (PORT, SVC_DATA, … see README)
  svc keygen                        create the responder key in SVC_DATA if missing; print it
  svc rotate-key                    retire the current key (kept published) and start the next epoch
  svc verify <response.json|-> [--pubkey <b32>] [--json] [--log <url|file>]
                                    verify a saved response (every receipt and fact) or a receipt
                                    offline (exit 0 valid, 1 invalid, 2 unreadable; --help for more)
  svc log verify [<log dir>]        check a whole transparency log offline (default SVC_DATA/log)
  svc agent-key <file>              create an agent key file (0600) if missing; print its public key
  svc sign --key <file> --url <base> < bodies.json
                                    sign record bodies ([{band, value, scope?}] or full bodies) into
                                    the batch envelope memory writes take (docs/memory.md)`;

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
      case 'agent-key':
        return agentKeyCommand(rest);
      case 'sign':
        return await signCommand(rest);
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
