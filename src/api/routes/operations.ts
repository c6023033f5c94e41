/** REST adapter of the operation table: one route per operation, thin. */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../../protocol/errors.js';
import type { ServiceContext } from '../../primitives/context.js';
import { toSvcError } from '../errors.js';
import type { Operation } from '../operations.js';

/** Run `op` under the gateway deadline, recording latency and errors for agent_stats. */
export async function runOperation(ctx: ServiceContext, op: Operation, input: unknown, headers: Record<string, string | string[] | undefined>, channel: 'rest' | 'mcp') {
  const started = performance.now();
  const budgetMs = ctx.config.timeoutSecs * 1000;
  // Primitives get a soft deadline a little before the hard one, to assemble and sign what they have.
  const deadline = Date.now() + budgetMs - Math.min(500, budgetMs * 0.15);
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      op.run(ctx, input ?? {}, { headers, deadline }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SvcError('compute_timeout', `${op.name}: exceeded the ${ctx.config.timeoutSecs} s gateway timeout`, { timeout_s: ctx.config.timeoutSecs })), budgetMs);
      }),
    ]);
    ctx.metrics.record(`${channel}:${op.name}`, performance.now() - started);
    ctx.metrics.record(op.name, performance.now() - started);
    return result;
  } catch (err) {
    const code = toSvcError(err).code;
    ctx.metrics.record(`${channel}:${op.name}`, performance.now() - started, code);
    ctx.metrics.record(op.name, performance.now() - started, code);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export async function operationRoutes(app: FastifyInstance, ctx: ServiceContext, ops: readonly Operation[]): Promise<void> {
  for (const op of ops) {
    app.route({
      method: op.method,
      url: op.path,
      schema: {
        summary: op.summary,
        description: op.description,
        tags: op.tags,
        ...(op.method === 'GET' ? { querystring: op.input } : { body: op.input }),
      },
      handler: async (req, reply) => {
        const input = op.method === 'GET' ? req.query : req.body;
        const result = await runOperation(ctx, op, input, req.headers, 'rest');
        if (op.http && op.http(result, req, reply)) return reply;
        return result;
      },
    });
  }
}
