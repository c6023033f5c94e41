/**
 * The command line never acts on --help. `svc rotate-key --help` used to retire the responder
 * key, `serve --help` to start a server, `agent-key --help` to write a key file named `--help`.
 * For every command: --help and -h print its usage on stdout, exit 0 and leave SVC_DATA (and the
 * working directory) exactly as they were; an unknown flag or an extra argument is refused on
 * stderr with exit 2 and changes nothing either.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli-commands.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin/svc.mjs');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

let base: string;
/** SVC_DATA holding a responder key made by `svc keygen`. */
let data: string;
/** The working directory of every run (where agent-key would write a relative file). */
let cwd: string;
const home = process.cwd();
const savedData = process.env.SVC_DATA;
/** A port nothing listens on: a `serve` that started would take it. */
const port = 20000 + Math.floor(Math.random() * 20000);

/** Every file under `dir` with its bytes and mode, or null when `dir` does not exist. */
function tree(dir: string): Record<string, string> | null {
  if (!existsSync(dir)) return null;
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(dir, p)] = `${statSync(p).mode.toString(8)} ${readFileSync(p, 'base64')}`;
    }
  };
  walk(dir);
  return out;
}

/** `svc …` as its own process through bin/svc.mjs; one that does not end within 20 s (a server) is killed. */
function spawnSvc(args: string[], dataDir = data): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env, SVC_DATA: dataDir, PORT: String(port), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn' };
    const child = execFile(process.execPath, [bin, ...args], { cwd, env, timeout: 20_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** The same command line run in this process (SVC_DATA and the working directory set as for spawnSvc), its output captured. */
async function run(args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => void out.push(a.join(' ') + '\n');
  console.error = (...a: unknown[]) => void err.push(a.join(' ') + '\n');
  try {
    return { status: await runCli(args), stdout: out.join(''), stderr: err.join('') };
  } finally {
    Object.assign(console, { log, error });
  }
}

before(() => {
  base = mkdtempSync(join(tmpdir(), 'svc-cli-help-'));
  data = join(base, 'data');
  cwd = join(base, 'cwd');
  mkdirSync(cwd);
  const k = spawnSync(process.execPath, [bin, 'keygen'], { encoding: 'utf8', env: { ...process.env, SVC_DATA: data } });
  assert.equal(k.status, 0, k.stderr);
  process.env.SVC_DATA = data;
  process.chdir(cwd);
});
after(() => {
  process.chdir(home);
  if (savedData === undefined) delete process.env.SVC_DATA;
  else process.env.SVC_DATA = savedData;
  rmSync(base, { recursive: true, force: true });
});

/** Each command, as typed, with the line its usage must start with. */
const COMMANDS: Array<[string[], RegExp]> = [
  [['serve'], /^usage: svc serve\b/],
  [['keygen'], /^usage: svc keygen\b/],
  [['rotate-key'], /^usage: svc rotate-key\b/],
  [['verify'], /^usage: svc verify <response\.json/],
  [['log'], /^usage: svc log verify\b/],
  [['log', 'verify'], /^usage: svc log verify\b/],
  [['agent-key'], /^usage: svc agent-key <file>/],
  [['sign'], /^usage: svc sign --key <file>/],
  [['keygen', '--attester'], /^usage: svc keygen\b/],
  [['attest'], /^usage: svc attest <facts\.json\|->/],
  [['bearer'], /^usage: svc bearer --scope/],
  [['fetch'], /^usage: svc fetch <fact_cid>/],
  [['mcp'], /^usage: svc mcp \[--url <base>\]/],
];

/** Run `args` and check it changed nothing: SVC_DATA, the working directory, and no server came up. */
async function changesNothing(args: string[], how: (args: string[]) => Promise<Run> = run): Promise<Run> {
  const before = { data: tree(data), cwd: tree(cwd) };
  const r = await how(args);
  assert.notEqual(r.status, null, `svc ${args.join(' ')} did not exit (a server started?)`);
  assert.deepEqual({ data: tree(data), cwd: tree(cwd) }, before, `svc ${args.join(' ')} changed files`);
  return r;
}

describe('svc <command> --help and -h', () => {
  for (const [cmd, usage] of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      it(`svc ${cmd.join(' ')} ${flag}: usage on stdout, exit 0, nothing changed`, async () => {
        const r = await changesNothing([...cmd, flag]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, usage);
        assert.equal(r.stderr, '');
      });
    }
  }

  it('help also wins over arguments a command would act on', async () => {
    for (const args of [
      ['agent-key', 'new-key.json', '--help'],
      ['rotate-key', '-h'],
      ['log', 'verify', join(base, 'nowhere'), '-h'],
      ['keygen', '--attester', '--out', 'new-attester.json', '--help'],
      ['attest', 'facts.json', '--key', 'k.json', '-h'],
    ]) {
      const r = await changesNothing(args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^usage: svc /);
    }
    assert.equal(existsSync(join(cwd, 'new-key.json')), false);
    assert.equal(existsSync(join(cwd, 'new-attester.json')), false);
  });

  it('svc, svc --help, svc -h and svc help print the overview; svc help <command> that command', async () => {
    for (const args of [[], ['--help'], ['-h'], ['help']]) {
      const r = await changesNothing(args);
      assert.equal(r.status, 0);
      assert.match(r.stdout, /^usage:\n {2}svc serve[\s\S]*svc rotate-key[\s\S]*svc agent-key/);
    }
    const one = await changesNothing(['help', 'rotate-key']);
    assert.equal(one.status, 0);
    assert.match(one.stdout, /^usage: svc rotate-key\b/);
  });
});

describe('svc <command> with an unknown flag or an extra argument', () => {
  /** [args, what stderr must say]. */
  const REFUSED: Array<[string[], RegExp]> = [
    [['serve', '--port', '9999'], /svc serve: Unknown option '--port'/],
    [['serve', 'now'], /svc serve: takes no arguments/],
    [['keygen', '--frobnicate'], /svc keygen: Unknown option '--frobnicate'/],
    [['keygen', '--force'], /svc keygen: --out and --force apply to an attester key only/],
    [['keygen', '--attester', 'extra'], /svc keygen: takes no arguments/],
    [['keygen', 'extra'], /svc keygen: takes no arguments/],
    [['rotate-key', '--yes'], /svc rotate-key: Unknown option '--yes'/],
    [['rotate-key', '-y'], /svc rotate-key: Unknown option '-y'/],
    [['rotate-key', 'now'], /svc rotate-key: takes no arguments/],
    [['verify', 'x.json', '--frobnicate'], /svc verify: Unknown option '--frobnicate'/],
    [['verify', 'a.json', 'b.json'], /svc verify: unexpected argument "b\.json"/],
    [['verify', 'x.json', '--pubkey'], /svc verify: Option '--pubkey <value>' argument missing/],
    [['log', 'verify', '--deep'], /svc log: Unknown option '--deep'/],
    [['log', 'verify', 'a', 'b'], /svc log: unexpected argument "b"/],
    [['log', 'rebuild'], /svc log: unknown subcommand "rebuild"/],
    [['agent-key', 'k.json', '--force'], /svc agent-key: Unknown option '--force'/],
    [['agent-key', 'a.json', 'b.json'], /svc agent-key: unexpected argument "b\.json"/],
    [['agent-key'], /svc agent-key: missing <file>/],
    [['sign', '--key', 'k.json', '--url', 'http://127.0.0.1:9', '--dry-run'], /svc sign: Unknown option '--dry-run'/],
    [['sign', '--key', 'k.json', '--registry-cid', 'a', '--schema-cid', 'b', 'extra'], /svc sign: takes no arguments/],
    [['attest', 'facts.json', '--key', 'k.json', '--dry-run'], /svc attest: Unknown option '--dry-run'/],
    [['attest', '--key', 'k.json'], /svc attest: missing <facts\.json\|->/],
    [['bearer', '--scope', 'agent_id=a', '--key', 'k.json', 'extra'], /svc bearer: takes no arguments/],
    [['fetch'], /svc fetch: missing <fact_cid>/],
    [['mcp', '--port', '8080'], /svc mcp: Unknown option '--port'/],
    [['mcp', 'http://127.0.0.1:8080'], /svc mcp: takes no arguments/],
    [['mcp', '--url', 'ftp://127.0.0.1'], /svc mcp: --url: not an http\(s\) URL/],
    [['mcp', '--url', 'not a url'], /svc mcp: --url: Invalid URL/],
    [['frobnicate'], /svc: unknown command "frobnicate"/],
    [['--version'], /svc: unknown command "--version"/],
  ];
  for (const [args, says] of REFUSED) {
    it(`svc ${args.join(' ')} → exit 2, a message on stderr, nothing changed`, async () => {
      const r = await changesNothing(args);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, says);
      assert.equal(r.stdout, '');
    });
  }
});

// The same through the real entry (bin/svc.mjs), as its own process: exit status and streams as a shell sees them.
describe('as a process', { concurrency: 2 }, () => {
  for (const args of [
    ['rotate-key', '--help'],
    ['agent-key', '--help'],
    ['keygen', '-h'],
    ['sign', '-h'],
  ]) {
    it(`svc ${args.join(' ')} exits 0 with the usage and changes nothing`, async () => {
      const r = await changesNothing(args, spawnSvc);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^usage: svc ${args[0]}\\b`));
    });
  }

  it('svc serve --help with an empty SVC_DATA exits 0, creates nothing and listens nowhere', async () => {
    const fresh = join(base, 'never-created');
    const r = await spawnSvc(['serve', '--help'], fresh);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: svc serve\b/);
    assert.equal(existsSync(fresh), false, 'SVC_DATA was not created');
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), 'nothing listens on PORT');
  });

  it('svc rotate-key --yes exits 2 with the reason on stderr and the key unchanged', async () => {
    const r = await changesNothing(['rotate-key', '--yes'], spawnSvc);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /svc rotate-key: Unknown option '--yes'/);
    assert.equal(r.stdout, '');
  });
});

describe('the commands still act when asked properly', () => {
  it('agent-key <file> writes the file; rotate-key rotates', async () => {
    const k = await run(['agent-key', 'agent.json']);
    assert.equal(k.status, 0, k.stderr);
    assert.equal(JSON.parse(k.stdout).created, true);
    assert.equal(existsSync(join(cwd, 'agent.json')), true);
    const r = await run(['rotate-key']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).epoch, 1);
  });
});
