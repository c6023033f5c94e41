// Load generator child of bench/load.ts: runs one autocannon load per IPC message and replies with
// its figures. Latency percentiles are computed here from every response's own time (autocannon's
// histogram keeps whole milliseconds, too coarse for a 2 ms target).
import autocannon from 'autocannon';

function percentile(sorted, q) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

process.on('message', (msg) => {
  if (msg === 'exit') process.exit(0);
  const times = [];
  const instance = autocannon({ ...msg, headers: { 'content-type': 'application/json', ...(msg.headers ?? {}) } }, (err, r) => {
    if (err) return process.send({ ok: false, error: String(err) });
    const sorted = Float64Array.from(times).sort();
    const round = (x) => Number(x.toFixed(3));
    process.send({
      ok: r.non2xx === 0 && r.errors === 0,
      non2xx: r.non2xx,
      errors: r.errors,
      total: r.requests.total,
      rps: r.requests.average,
      p50_ms: round(percentile(sorted, 0.5)),
      p99_ms: round(percentile(sorted, 0.99)),
      p99_9_ms: round(percentile(sorted, 0.999)),
    });
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) times.push(responseTime);
  });
});
process.send('ready');
