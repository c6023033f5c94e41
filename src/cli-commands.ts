/**
 * The `svc` commands: `serve | keygen | rotate-key | verify <response.json> [options] | log verify
 * [dir] | agent-key <file> | sign --key <file> … | attest | bearer | fetch | mcp` (the writer's
 * commands and keygen --attester are in cli-writer.ts). Every command parses its arguments strictly
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
import { ATTEST_SPEC, BEARER_SPEC, FETCH_SPEC, attestCommand, attesterKeygen, bearerCommand, fetchCommand } from './cli-writer.js';
import { MCP_SPEC, mcpCommand } from './cli-mcp.js';

const USAGE = `usage:
  svc serve                         run the responder (PORT, SVC_DATA, … see README)
  svc keygen                        create the responder key in SVC_DATA if missing; print it
  svc keygen --attester [--out <file>] [--force]
                                    create an attester key file (0600) for writing; print its
                                    public key and how the operator lets it write
  svc rotate-key                    retire the current key (kept published) and start the next epoch
  svc verify <response.json|-> [--pubkey <b32>] [--json] [--log <url|file>]
                                    verify a saved response (every receipt and fact) or a receipt
                                    offline (exit 0 valid, 1 invalid, 2 unreadable; --help for more)
  svc log verify [<log dir>]        check a whole transparency log offline (default SVC_DATA/log)
  svc attest <facts.json|-> --key <file> [--url <base>] [--cbor] [--json]
                                    sign a batch of facts with the key and post it; print the
                                    fact_cids and the log index
  svc bearer --scope <k=v[,k=v]> --key <file> [--url <base>] [--ttl <secs>]
                                    print a read bearer for a private scope (docs/scopes.md)
  svc fetch <fact_cid> [--url <base>] [--bearer <b>] [--pubkey <b32>]
                                    fetch a fact and verify it offline (exit 0 valid, 1 invalid)
  svc agent-key <file>              alias of keygen --attester --out <file>, but an existing file is
                                    kept and its public key printed
  svc sign --key <file> --url <base> < bodies.json
                                    sign record bodies ([{band, value, scope?}] or full bodies) into
                                    the batch envelope memory writes take (docs/memory.md), without
                                    posting it
  svc mcp [--url <base>] [--full] [--bearer <token>]
                                    bridge an MCP host that speaks stdio to a responder's
                                    Streamable HTTP endpoint (<base>/mcp, or /mcp/full); ends
                                    when stdin closes

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
       svc keygen --attester [--out <file>] [--force] [--json]

Without --attester: creates the responder key in SVC_DATA/keys/responder.json (mode 0600) if it
is missing, and prints {created, public_key, epoch, path}. An existing key is never replaced.

With --attester: creates an attester key file for a writer (svc attest, svc bearer), JSON
{schema, algorithm, public_key, seed_b32, created_at} with mode 0600, and prints its public key
and what the responder's operator must do to accept its writes (list it in SVC_ATTESTER_KEYS,
or vouch for it as a device, docs/devices.md). Does not read SVC_DATA. \`svc agent-key <file>\`
is an older alias that keeps an existing file instead of refusing.

options:
  --attester      create an attester key file instead of the responder key
  --out <file>    where to write it (default ./attester-key.json)
  --force         replace an existing file (its key is lost); without it an existing file is
                  refused with exit 2
  --json          print {created, path, public_key, created_at, mode, enrol} as JSON
  -h, --help      print this and exit 0`,
  options: {
    attester: { type: 'boolean', default: false },
    out: { type: 'string' },
    force: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
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
const SIMPLE: Record<string, { spec: CommandSpec; run: (values: Record<string, string | boolean | undefined>) => Promise<number> }> = {
  serve: {
    spec: SERVE,
    run: async () => {
      const config = loadConfig();
      if (config.workers > 1) {
        // One process owns the store, the workers serve (src/workers.ts).
        const { serveWithWorkers } = await import('./workers.js');
        await serveWithWorkers(config);
        return -1;
      }
      const { startServer, closeOnSignals } = await import('./server.js');
      const server = await startServer(config);
      closeOnSignals(server);
      return -1; // keep running
    },
  },
  keygen: {
    spec: KEYGEN,
    run: async (v) => {
      if (v.attester) return attesterKeygen(KEYGEN, v as { out?: string; force?: boolean; json?: boolean });
      if (v.out !== undefined || v.force) return usageError(KEYGEN, '--out and --force apply to an attester key only: add --attester');
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
  attest: ATTEST_SPEC.usage,
  bearer: BEARER_SPEC.usage,
  fetch: FETCH_SPEC.usage,
  mcp: MCP_SPEC.usage,
};

/** Run one command line (without `node` and the script); the exit status, or -1 while serving. */
export async function runCli(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    const simple = cmd !== undefined && Object.hasOwn(SIMPLE, cmd) ? SIMPLE[cmd] : undefined;
    if (simple) {
      const p = parseCommand(simple.spec, rest);
      return p.run ? await simple.run(p.values) : p.code;
    }
    switch (cmd) {
      case 'verify':
        return await verifyCommand(rest);
      case 'agent-key':
        return agentKeyCommand(rest);
      case 'sign':
        return await signCommand(rest);
      case 'attest':
        return await attestCommand(rest);
      case 'bearer':
        return await bearerCommand(rest);
      case 'fetch':
        return await fetchCommand(rest);
      case 'log':
        return await logCommand(rest);
      case 'mcp':
        return await mcpCommand(rest);
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
