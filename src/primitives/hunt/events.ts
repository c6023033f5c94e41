/**
 * Hunt events (docs/hunt.md): an event name or alias → its algorithm, primary band, gate and
 * ranking direction. The event table itself lives in the registry (hunt_events.json); this
 * module only turns a lookup miss into the typed errors the contract names.
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { resolveHuntEvent, type AlgorithmEntry, type BandEntry, type HuntRank } from '../../registry/registry.js';
import type { ServiceContext } from '../context/context.js';
import { gateFor, type Gate } from './gates.js';

export interface ResolvedEvent {
  event: string;
  algorithm: AlgorithmEntry;
  primary: BandEntry;
  gate?: Gate;
  rank: HuntRank;
  slow: boolean;
}

/** The event for `name` (any case-insensitive alias), or invalid_argument / not_yet_implemented. */
export function resolveEvent(ctx: ServiceContext, name: string): ResolvedEvent {
  const events = ctx.registry.huntEventList.map((e) => e.event);
  if (name.trim() === '') throw invalidArgument('event', `expected one of ${events.join(', ')}`);
  const ev = resolveHuntEvent(name, ctx.registry);
  if (!ev) {
    throw new SvcError('invalid_argument', `event: ${JSON.stringify(name.slice(0, 64))} is not a hunt event; one of ${events.join(', ')} (or an alias, see details.aliases)`, {
      field: 'event',
      events,
      aliases: Object.fromEntries(ctx.registry.huntEventList.map((e) => [e.event, e.aliases])),
    });
  }
  if (ev.algorithm === null || ev.rank === null) {
    const workaround = ctx.registry.notYetImplemented.get(ev.event) ?? 'no workaround is registered';
    throw new SvcError('not_yet_implemented', `event: ${ev.event} has no hunt algorithm on this responder yet. ${workaround}`, {
      field: 'event',
      event: ev.event,
      workaround,
    });
  }
  const algorithm = ctx.registry.algorithms.get(ev.algorithm)!;
  // The registry guarantees the first input band is the algorithm's scalar primary (registry.ts).
  const primary = ctx.registry.bands.get(algorithm.bands[0]!)!;
  const gate = gateFor(ev.event);
  return { event: ev.event, algorithm, primary, gate, rank: ev.rank, slow: ev.slow };
}
