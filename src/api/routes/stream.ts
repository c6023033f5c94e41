/**
 * GET /v1/stream (docs/reads.md, "The corpus snapshot and its stream"): server-sent events carrying
 * signed `corpus.state` ticks — the corpus_state_stats payload — one at connect, then every
 * `interval_s` (5..300, default 15). A client that disconnects releases its timer at once.
 */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { corpusStateStats } from '../../primitives/reads/corpus-stats.js';
import type { ServiceContext } from '../../primitives/context/context.js';
import type { Lifecycle } from '../shutdown.js';

export interface StreamState {
  /** Open streams (tests check that disconnects release them). */
  active: number;
}

/** With `life`, open streams end when a drain starts (clients reconnect, to another responder). */
export async function streamRoutes(app: FastifyInstance, ctx: ServiceContext, life?: Lifecycle): Promise<StreamState> {
  const state: StreamState = { active: 0 };
  app.get(
    '/v1/stream',
    {
      schema: {
        summary: 'Server-sent events: signed corpus.state ticks',
        tags: ['events'],
        querystring: {
          type: 'object',
          properties: { interval_s: { type: 'integer', minimum: 5, maximum: 300, default: 15, description: 'tick interval in seconds' } },
          additionalProperties: false,
        },
      },
    },
    async (req, reply) => {
      const interval = (req.query as { interval_s?: number }).interval_s ?? 15;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      state.active++;
      let seq = 0;
      let closed = false;
      const tick = async () => {
        if (closed) return;
        try {
          const snap = await corpusStateStats(ctx);
          if (!closed) res.write(`id: ${seq++}\nevent: corpus.state\ndata: ${JSON.stringify(snap)}\n\n`);
        } catch (err) {
          req.log.warn({ err }, 'stream tick failed');
          if (!closed) res.write(`event: error\ndata: ${JSON.stringify({ code: 'internal', message: 'tick failed; the stream continues' })}\n\n`);
        }
      };
      const timer = setInterval(() => void tick(), interval * 1000);
      const end = () => res.end();
      const release = () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        state.active--;
        life?.onDrain.delete(end);
      };
      res.on('close', release);
      life?.onDrain.add(end);
      res.write(`retry: ${interval * 1000}\n: interval ${interval}s\n\n`);
      await tick();
    },
  );
  return state;
}
