/** REST adapter of the operation table: one route per operation, thin. */
import { applyCellAlias, cellAliasOf } from '../cell-alias.js';
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../../primitives/context/context.js';
import { withFactMeta } from '../../primitives/facts/fact-meta.js';
import { toSvcError } from '../errors.js';
import { toJson } from '../json.js';
import type { Operation, OperationCall } from '../operations.js';
import { answerMismatch } from '../validation.js';

/**
 * Hard deadlines of in-flight operations, swept by one timer: a per-request setTimeout costs
 * a timer-list insert and removal on every call, and the deadline is seconds away anyway.
 * An entry holds what the sweep needs to fail the call (no closure per request).
 */
interface Deadline {
  at: number;
  reject: (err: unknown) => void;
  name: string;
  timeoutSecs: number;
}
const deadlines = new Set<Deadline>();
let sweeper: NodeJS.Timeout | undefined;
const SWEEP_MS = 50;

function sweep(): void {
  const now = Date.now();
  for (const d of deadlines) {
    if (now >= d.at) {
      deadlines.delete(d);
      d.reject(new SvcError('compute_timeout', `${d.name}: exceeded the ${d.timeoutSecs} s gateway timeout`, { timeout_s: d.timeoutSecs }));
    }
  }
  if (deadlines.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

// agent_stats keys per operation and channel, built once rather than per call.
const channelKeys = new WeakMap<Operation, { rest: string; mcp: string }>();
function channelKey(op: Operation, channel: 'rest' | 'mcp'): string {
  let k = channelKeys.get(op);
  if (!k) {
    k = { rest: `rest:${op.name}`, mcp: `mcp:${op.name}` };
    channelKeys.set(op, k);
  }
  return k[channel];
}

/** Run `op` under the gateway deadline, recording latency and errors for agent_stats. */
export async function runOperation(
  ctx: ServiceContext,
  op: Operation,
  input: unknown,
  headers: Record<string, string | string[] | undefined>,
  channel: 'rest' | 'mcp',
  ip?: string,
  progress?: OperationCall['progress'],
) {
  const started = performance.now();
  const timeoutSecs = ctx.config.timeoutSecs;
  const now = Date.now();
  const budgetMs = timeoutSecs * 1000;
  // Primitives get a soft deadline a little before the hard one, to assemble and sign what they have.
  const deadline = now + budgetMs - Math.min(500, budgetMs * 0.15);
  let entry: Deadline | undefined;
  try {
    const running = op.run(ctx, input ?? {}, progress ? { headers, deadline, ip, channel, progress } : { headers, deadline, ip, channel });
    const result = await new Promise((resolve, reject) => {
      entry = { at: now + budgetMs, reject, name: op.name, timeoutSecs };
      deadlines.add(entry);
      sweeper ??= setInterval(sweep, SWEEP_MS);
      running.then(resolve, reject);
    });
    const ms = performance.now() - started;
    ctx.metrics.record(channelKey(op, channel), ms);
    ctx.metrics.record(op.name, ms);
    return withFactMeta(result);
  } catch (err) {
    const code = toSvcError(err).code;
    const ms = performance.now() - started;
    ctx.metrics.record(channelKey(op, channel), ms, code);
    ctx.metrics.record(op.name, ms, code);
    throw err;
  } finally {
    if (entry) deadlines.delete(entry);
  }
}

/**
 * With SVC_CHECK_RESPONSES=1: the answer must match the operation's declared response schema,
 * or the call fails as an internal error (logged with the mismatch) instead of sending it.
 */
export function checkAnswer(op: Operation, result: unknown, log: { error(obj: object, msg: string): void }): void {
  const mismatch = answerMismatch(op.output, toJson(result));
  if (mismatch === undefined) return;
  log.error({ operation: op.name, mismatch }, 'answer does not match its declared schema');
  // The mismatch names schema paths only, never the answer's data: it is safe to return.
  throw new SvcError('internal', `${op.name}: the answer does not match its declared schema: ${mismatch}`, { operation: op.name, mismatch });
}

export async function operationRoutes(app: FastifyInstance, ctx: ServiceContext, ops: readonly Operation[]): Promise<void> {
  for (const op of ops) {
    const alias = cellAliasOf(op.input);
    app.route({
      method: op.method,
      url: op.path,
      // `cell` and `cell64` are one parameter under two names: the undeclared one is moved first.
      ...(alias ? { preValidation: async (req: { query: unknown; body: unknown }) => applyCellAlias(alias, op.method === 'GET' ? req.query : req.body) } : {}),
      schema: {
        summary: op.summary,
        description: op.description,
        tags: op.tags,
        ...(op.method === 'GET' ? { querystring: op.input } : { body: op.input }),
        // Documentation only: answers are encoded by the reply serializer (api/json.ts), which
        // keeps served facts' JSON once; fastify's schema serializer is not used (docs/performance.md).
        response: { 200: op.output },
      },
      handler: async (req, reply) => {
        const input = op.method === 'GET' ? req.query : req.body;
        const result = await runOperation(ctx, op, input, req.headers, 'rest', req.ip);
        if (ctx.config.checkResponses) checkAnswer(op, result, req.log);
        if (op.http && op.http(result, req, reply)) return reply;
        return result;
      },
    });
  }
}
