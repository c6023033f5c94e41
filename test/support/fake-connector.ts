/** An in-test connector whose behaviour per band is scripted: answer, confirm absence, time out, fail. */
import type { Materializer, MaterializeOutcome, MaterializeRequest } from '../../src/sources/contract.js';

export type Script = (req: MaterializeRequest) => MaterializeOutcome | Promise<MaterializeOutcome>;

export interface FakeConnector extends Materializer {
  calls: MaterializeRequest[];
  script: Map<string, Script>;
}

export function fakeConnector(bands: string[], scripts: Record<string, Script> = {}): FakeConnector {
  const script = new Map(Object.entries(scripts));
  const calls: MaterializeRequest[] = [];
  return {
    key: 'fake',
    bands,
    history: false,
    calls,
    script,
    async materialize(req) {
      calls.push(req);
      const s = script.get(req.band.key);
      if (!s) return { status: 'value', value: 42.5, provenance: { source: 'fake', ref: `req-${calls.length}`, captured_at: '2026-11-20T00:00:00Z', version: 'v1' }, fn: 'fake@1' };
      return s(req);
    },
  };
}

/** Resolves after `ms`, or with a timeout outcome when the request is aborted first. */
export function slow(ms: number, outcome: MaterializeOutcome): Script {
  return (req) =>
    new Promise((resolve) => {
      const t = setTimeout(() => resolve(outcome), ms);
      req.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve({ status: 'timeout', reason: 'aborted' });
      });
    });
}
