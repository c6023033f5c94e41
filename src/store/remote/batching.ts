/**
 * Messages between the owner and a worker, coalesced: whatever one side sends to the other within
 * one turn of its event loop travels as one IPC message. Every IPC message is a pipe write on one
 * side and a wake-up and a read on the other; under load (many requests, each a call, a reply and
 * cache bumps) those cost more than the work they carry (a profile of the owner under 32
 * concurrent single-fact writes through two workers spent a quarter of its time in the pipe
 * writes of its replies). Order is kept: messages go out in the order they were sent.
 */
import { isMessage, type Channel } from './rpc.js';

/** Several messages in one. */
export interface BatchMessage {
  svc: 'batch';
  messages: unknown[];
}

/**
 * `channel` with sends held until the end of the current turn (setImmediate) and sent together;
 * received batches are delivered to the listeners one message at a time, in order. Both ends of
 * a channel must use it. A send that fails (the channel closed meanwhile) is dropped: each side
 * learns of a closed channel from its own exit or disconnect handling.
 */
export function batchingChannel(channel: Channel): Channel {
  let queue: unknown[] | null = null;
  const listeners: Array<(m: unknown) => void> = [];
  const deliver = (m: unknown) => {
    for (const l of [...listeners]) l(m);
  };
  channel.on('message', (m) => {
    if (isMessage<BatchMessage>(m, 'batch') && Array.isArray(m.messages)) for (const x of m.messages) deliver(x);
    else deliver(m);
  });
  const flush = () => {
    const out = queue ?? [];
    queue = null;
    try {
      channel.send(out.length === 1 ? out[0] : ({ svc: 'batch', messages: out } satisfies BatchMessage));
    } catch {
      // closed: see above
    }
  };
  return {
    send(message: unknown) {
      if (queue === null) {
        queue = [];
        setImmediate(flush);
      }
      queue.push(message);
      return true;
    },
    on(_event: 'message', listener: (m: unknown) => void) {
      listeners.push(listener);
    },
    off(_event: 'message', listener: (m: unknown) => void) {
      const i = listeners.indexOf(listener);
      if (i >= 0) listeners.splice(i, 1);
    },
  };
}
