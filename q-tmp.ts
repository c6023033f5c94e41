import Database from 'better-sqlite3';
const db = new Database(process.argv[2] + '/index.sqlite', { readonly: true });
const top = db.prepare("SELECT term, df FROM note_df WHERE scope_id = 0 ORDER BY df DESC LIMIT 1 OFFSET 10").get() as any;
console.log(top);
const m = `"0q${top.term}"`;
const variants: Record<string, string> = {
  full: `SELECT n.id, n.cid, n.attester_id, n.accepted_at, n.observed_at, n.lat, n.lng, n.thread, n.doc FROM notes_fts CROSS JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH @m AND n.scope_id = 0 ORDER BY notes_fts.rowid DESC LIMIT 1000`,
  iddoc: `SELECT n.id, n.doc FROM notes_fts CROSS JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH @m AND n.scope_id = 0 ORDER BY notes_fts.rowid DESC LIMIT 1000`,
  ftsonly: `SELECT rowid FROM notes_fts WHERE notes_fts MATCH @m ORDER BY rowid DESC LIMIT 1000`,
};
for (const [k, sql] of Object.entries(variants)) {
  const st = db.prepare(sql);
  const ts: number[] = [];
  for (let i = 0; i < 20; i++) { const t0 = performance.now(); st.all({ m }); ts.push(performance.now() - t0); }
  ts.sort((a, b) => a - b);
  console.log(k, 'median', ts[10].toFixed(2), 'ms');
}
const raw = db.prepare(variants.iddoc).raw(true);
const ts: number[] = [];
for (let i = 0; i < 20; i++) { const t0 = performance.now(); raw.all({ m }); ts.push(performance.now() - t0); }
ts.sort((a, b) => a - b); console.log('iddoc raw median', ts[10].toFixed(2));
