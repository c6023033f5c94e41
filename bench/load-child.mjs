// Load generator child of bench/load.ts: runs one autocannon load per IPC message, replies with the figures.
import autocannon from 'autocannon';

process.on('message', async (msg) => {
  if (msg === 'exit') process.exit(0);
  try {
    const r = await autocannon({ ...msg, headers: { 'content-type': 'application/json', ...(msg.headers ?? {}) } });
    process.send({
      ok: r.non2xx === 0 && r.errors === 0,
      non2xx: r.non2xx,
      errors: r.errors,
      total: r.requests.total,
      rps: r.requests.average,
      p50_ms: r.latency.p50,
      p99_ms: r.latency.p99,
      p99_9_ms: r.latency.p99_9,
    });
  } catch (err) {
    process.send({ ok: false, error: String(err) });
  }
});
process.send('ready');
