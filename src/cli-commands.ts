/**
 * The `svc` commands: `serve | keygen | rotate-key | verify <response.json> [options] | log verify
 * [dir] | agent-key <file> | sign --key <file> …`. Every command parses its arguments strictly
 * first (cli-args.ts): `--help`/`-h` prints its usage and exits 0, an unknown flag or extra
 * argument exits 2; neither touches SVC_DATA, a key or the network. verify exits 0 valid,
 * 1 invalid, 2 unreadable input. The process entry is cli.ts.
 */
import { join } from 'node:path';
import { parseCommand, usageError, type CommandSpec } from './cli-args.js';
import { ConfigError, loadConfig } from './config.js';
import { ensureKeyFile, loadResponderKeys, rotateResponderKey } from './keys.js';
import { VERIFY_SPEC, verifyCommand } from './cli-verify.js';
import { AGENT_KEY_SPEC, SIGN_SPEC, agentKeyCommand, signCommand } from './cli-sign.js';

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
                                    the batch envelope memory writes take (docs/memory.md)

  svc <command> --help (or -h) prints a command's usage and changes nothing.`;

const SERVE: CommandSpec = {
  name: 'serve',
  usage: `usage: svc serve

Runs the responder until SIGINT or SIGTERM. Configuration comes from the environment only
(PORT, SVC_HOST, SVC_DATA, SVC_DATABASE_URL, …; see README "Configuration").`,
};
const KEYGEN: CommandSpec = {
  name: 'keygen',
  usage: `usage: svc keygen

Creates the responder key in SVC_DATA/keys/responder.json (mode 0600) if it is missing, and
prints {created, public_key, epoch, path}. An existing key is never replaced.`,
};
const ROTATE_KEY: CommandSpec = {
  name: 'rotate-key',
  usage: `usage: svc rotate-key

Retires the responder key in SVC_DATA (it stays published at /.well-known/svc.json) and starts
the next key epoch with a new key; prints the new epoch and the retired key. Restart the
responder afterwards.`,
};
const LOG: CommandSpec = {
  name: 'log',
  usage: `usage: svc log verify [<log dir>]

Checks a whole transparency log offline: every record hash, sealed trailers and the tree.
<log dir> defaults to SVC_DATA/log. Exit 0 when it verifies, 1 when it does not.`,
  positionals: { min: 1, max: 2, names: ['the subcommand verify', '<log dir>'] },
};

/** Commands that take no arguments and need only the configuration. */
const SIMPLE: Record<string, { spec: CommandSpec; run: () => Promise<number> }> = {
  serve: {
    spec: SERVE,
    run: async () => {
      const { startServer, closeOnSignals } = await import('./server.js');
      const server = await startServer(loadConfig());
      closeOnSignals(server);
      return -1; // keep running
    },
  },
  keygen: {
    spec: KEYGEN,
    run: async () => {
      const cfg = loadConfig();
      const created = ensureKeyFile(cfg.dataDir);
      const k = loadResponderKeys(cfg.dataDir);
      console.log(JSON.stringify({ created, public_key: k.publicKeyB32, epoch: k.epoch, path: join(cfg.dataDir, 'keys', 'responder.json') }));
      return 0;
    },
  },
  'rotate-key': {
    spec: ROTATE_KEY,
    run: async () => {
      console.log(JSON.stringify(rotateResponderKey(loadConfig().dataDir)));
      return 0;
    },
  },
};

async function logCommand(args: string[]): Promise<number> {
  const p = parseCommand(LOG, args);
  if (!p.run) return p.code;
  const [sub, dirArg] = p.positionals;
  if (sub !== 'verify') return usageError(LOG, `unknown subcommand ${JSON.stringify(sub)}`);
  const { verifyLogDir } = await import('./store/log/disk-log.js');
  const dir = dirArg ?? join(loadConfig().dataDir, 'log');
  const r = await verifyLogDir(dir);
  console.log(JSON.stringify(r, null, 2));
  return r.ok ? 0 : 1;
}

/** Usage of one command, for `svc help <command>`. */
const USAGE_OF: Record<string, string> = {
  serve: SERVE.usage,
  keygen: KEYGEN.usage,
  'rotate-key': ROTATE_KEY.usage,
  log: LOG.usage,
  verify: VERIFY_SPEC.usage,
  'agent-key': AGENT_KEY_SPEC.usage,
  sign: SIGN_SPEC.usage,
};

/** Run one command line (without `node` and the script); the exit status, or -1 while serving. */
export async function runCli(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    const simple = cmd !== undefined && Object.hasOwn(SIMPLE, cmd) ? SIMPLE[cmd] : undefined;
    if (simple) {
      const p = parseCommand(simple.spec, rest);
      return p.run ? await simple.run() : p.code;
    }
    switch (cmd) {
      case 'verify':
        return await verifyCommand(rest);
      case 'agent-key':
        return agentKeyCommand(rest);
      case 'sign':
        return await signCommand(rest);
      case 'log':
        return await logCommand(rest);
      case undefined:
      case '--help':
      case '-h':
        console.log(USAGE);
        return 0;
      case 'help': {
        const topic = rest[0];
        const help = { name: 'help', usage: USAGE };
        if (rest.length > 1) return usageError(help, `takes one command name at most (got ${rest.length})`);
        if (topic !== undefined && !Object.hasOwn(USAGE_OF, topic)) return usageError(help, `unknown command ${JSON.stringify(topic)}`);
        console.log(topic === undefined ? USAGE : USAGE_OF[topic]);
        return 0;
      }
    }
    console.error(`svc: unknown command ${JSON.stringify(cmd)}\n\n${USAGE}`);
    return 2;
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`configuration: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
