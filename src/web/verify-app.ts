/**
 * The /verify page's script, bundled for the browser with the protocol module: it verifies a
 * receipt locally (BLAKE3, preimage, strict Ed25519) against a public key the user can see
 * and change, and never asks the server for a verdict.
 */
import { b32decode } from '../protocol/base32.js';
import { toHex } from '../protocol/bytes.js';
import { receiptPreimage, segmentHexes, verifyReceipt, merkleHex, type Receipt } from '../protocol/receipt.js';
import { verifyResponse, type CheckReport, type FactReport, type ResponseVerdict } from '../protocol/verify-response.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function row(name: string, ok: boolean | null, detail: string): string {
  const mark = ok === null ? '–' : ok ? '✓' : '✗';
  const cls = ok === null ? 'na' : ok ? 'ok' : 'bad';
  return `<tr class="${cls}" data-check="${name}"><td>${mark}</td><td>${name}</td><td><code>${detail.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!)}</code></td></tr>`;
}

const esc = (t: string) => t.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

/** One row per fact: what the body says, who signed it, and whether it recomputes and is bound. */
function factRow(f: FactReport): string {
  const cls = f.ok ? 'ok' : 'bad';
  const who = f.meta?.attester ? `${f.meta.attester_role ?? 'attester'} ${f.meta.attester.slice(0, 10)}…` : '—';
  const why = f.ok ? `bound by ${f.bound_by.join(', ')}` : f.errors.join('; ');
  return (
    `<tr class="${cls}" data-fact="${esc(f.fact_cid)}"><td>${f.ok ? '✓' : '✗'}</td><td>${esc(String(f.band))}</td><td><code>${esc(String(f.cell))}</code></td>` +
    `<td>${esc(String(f.tslot ?? '—'))}</td><td>${esc((JSON.stringify(f.value) ?? '').slice(0, 80))} ${esc(String(f.unit ?? f.meta?.declared_unit ?? ''))}</td>` +
    `<td>${esc(who)}${f.meta?.log_index !== undefined ? ` · log #${f.meta.log_index}` : ''}</td><td><code>${esc(why)}</code></td></tr>`
  );
}

const CHECK_TITLES: Record<CheckReport['check'], string> = {
  bound_shown: 'every fact the receipt binds is shown',
  search_results: 'search results are the signed notes, in the signed order',
  hotspots: "hotspots match their facts and the event's ranking",
  answer: 'the answer renders from its signed facts',
  field_boundaries: 'every field polygon hashes to a field_cid the receipt binds, over the signed box',
};

/** One row per check of what the response shows beside its facts (answer, hotspots, search results, left-out facts). */
function checkRow(c: CheckReport): string {
  const cls = c.ok ? 'ok' : 'bad';
  return (
    `<tr class="${cls}" data-check-kind="${esc(c.check)}"><td>${c.ok ? '✓' : '✗'}</td><td>${esc(CHECK_TITLES[c.check] ?? c.check)}</td><td><code>${esc(c.path)}</code></td>` +
    `<td><code>${esc(c.ok ? 'ok' : c.errors.join('; '))}</code></td></tr>`
  );
}

function responseTables(rv: ResponseVerdict): string {
  if (rv.bare_receipt) return '';
  const facts =
    rv.facts.length === 0
      ? '<p>No facts in this response (receipts and references only).</p>'
      : `<h2>Facts (${rv.facts.filter((f) => f.ok).length} of ${rv.facts.length} verified)</h2><table id="facts"><tr><th></th><th>band</th><th>cell</th><th>tslot</th><th>value</th><th>signed by</th><th>check</th></tr>${rv.facts.map(factRow).join('')}</table>`;
  const receipts = `<h2>Receipts (${rv.receipts.filter((r) => r.valid).length} of ${rv.receipts.length} valid)</h2><table id="receipts">${rv.receipts
    .map(
      (r) =>
        `<tr class="${r.valid ? 'ok' : 'bad'}" data-receipt="${esc(r.path)}"><td>${r.valid ? '✓' : '✗'}</td><td>${esc(r.primitive ?? '?')}</td><td><code>${esc(r.path)}</code></td><td>${r.fact_cids} fact_cid(s), ${r.cells} cell(s)</td><td><code>${esc(r.errors.join('; '))}</code></td></tr>`,
    )
    .join('')}</table>`;
  const refs = rv.references.filter((r) => !r.ok);
  const bad = refs.length === 0 ? '' : `<h2>References that fail</h2><ul>${refs.map((r) => `<li>${esc(r.errors.join('; '))}</li>`).join('')}</ul>`;
  const checks =
    rv.checks.length === 0
      ? ''
      : `<h2>What the response shows (${rv.checks.filter((c) => c.ok).length} of ${rv.checks.length} checks pass)</h2><table id="checks">${rv.checks.map(checkRow).join('')}</table>`;
  return facts + receipts + checks + bad + `<p class="na">${rv.unsigned.map(esc).join('<br>')}</p>`;
}

/** The receipt whose segments the page lists: the document itself, else the shallowest `receipt` in it. */
function pick(doc: any): any {
  if (doc && typeof doc === 'object' && 'signature' in doc) return doc;
  const queue: any[] = [doc];
  while (queue.length > 0) {
    const x = queue.shift();
    if (!x || typeof x !== 'object') continue;
    if (!Array.isArray(x) && x.receipt && typeof x.receipt === 'object') return x.receipt;
    queue.push(...Object.values(x));
  }
  return doc;
}

/** Verify the pasted receipt and render one row per check, naming the segment that failed. */
export function run(): void {
  const out = $('result');
  const rows: string[] = [];
  let doc: any;
  try {
    doc = JSON.parse(($('receipt') as HTMLTextAreaElement).value);
  } catch (e) {
    out.innerHTML = `<p id="verdict" class="bad">INVALID — not JSON: ${(e as Error).message}</p>`;
    return;
  }
  const r = pick(doc) as Receipt;
  const key = ($('pubkey') as HTMLInputElement).value.trim();
  const prefix = ($('prefix') as HTMLInputElement).value.trim() || 'svc';
  const v = verifyReceipt(r, { publicKey: key || undefined, prefix });
  const version = v.preimage_version ?? 0;
  rows.push(row('shape', !v.failures.includes('malformed'), v.failures.includes('malformed') ? v.errors.join('; ') : `preimage v${version}`));
  if (!v.failures.includes('malformed')) {
    const hx = segmentHexes(r, prefix);
    rows.push(row('0x01 request_id', null, r.request_id));
    rows.push(row('0x02 served_at', null, r.served_at));
    for (const [name, val] of Object.entries(hx)) rows.push(row(name, null, val!));
    rows.push(row('0x07 primitive', null, r.primitive));
    rows.push(row('0x08 cells', null, `${r.cells.length}: ${r.cells.join(', ')}`));
    rows.push(row('0x09 fact_cids', null, `${r.fact_cids.length}: ${r.fact_cids.join(', ')}`));
    if (version >= 2) {
      const merkleOk = !v.failures.includes('merkle_inclusion');
      rows.push(
        row(
          '0x0b merkle',
          r.merkle_proof ? merkleOk : null,
          r.merkle_proof ? `${merkleOk ? 'proof reaches root' : 'proof does NOT reach its root'} · ${merkleHex(r.merkle_proof, prefix)}` : `ABSENT marker · ${merkleHex(undefined, prefix)}`,
        ),
      );
    }
    rows.push(row('preimage BLAKE3', null, v.digest ? toHex(v.digest) : '—'));
    rows.push(
      row(
        'signature (Ed25519, strict)',
        !v.failures.includes('signature'),
        v.failures.includes('signature') ? 'does not verify over this preimage: some signed segment above was changed' : `by ${v.signer}`,
      ),
    );
    if (key) {
      const same = v.signer === key;
      rows.push(row('key', same, same ? 'the receipt names the key you pinned' : `the receipt names ${v.signer}, not the key you pinned`));
    }
    try {
      $('preimage').textContent = toHex(receiptPreimage(r, prefix));
    } catch {
      $('preimage').textContent = '';
    }
  }
  // The whole document: every fact recomputed from its body and bound by a covering receipt.
  const rv = verifyResponse(doc, { publicKey: key || undefined, prefix });
  const valid = v.valid && v.trusted && rv.valid && rv.trusted;
  const errors = [...new Set([...v.errors, ...rv.errors])];
  out.innerHTML = `<p id="verdict" class="${valid ? 'ok' : 'bad'}">${valid ? 'VALID' : 'INVALID'}</p><h2>Root receipt</h2><table>${rows.join('')}</table>${responseTables(rv)}`;
  if (!valid) out.insertAdjacentHTML('beforeend', `<ul id="errors">${errors.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>`);
}

async function init(): Promise<void> {
  $('verify').addEventListener('click', run);
  const cfg = JSON.parse($('config').textContent || '{}') as { prefix?: string; fact_cid?: string };
  ($('prefix') as HTMLInputElement).value = cfg.prefix ?? 'svc';
  try {
    const wk = await (await fetch(`/.well-known/${cfg.prefix ?? 'svc'}.json`)).json();
    if (!($('pubkey') as HTMLInputElement).value) ($('pubkey') as HTMLInputElement).value = wk.responder_pubkey_b32;
    b32decode(wk.responder_pubkey_b32, 32);
  } catch {
    // Offline or another origin: the user pastes the key.
  }
  if (cfg.fact_cid) {
    try {
      const res = await fetch('/v1/fetch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cid: cfg.fact_cid }) });
      const body = await res.json();
      // The whole fetch answer: the page checks the fact's body as well as its receipts.
      ($('receipt') as HTMLTextAreaElement).value = JSON.stringify(body, null, 2);
      run();
    } catch (e) {
      $('result').textContent = `could not load fact ${cfg.fact_cid}: ${(e as Error).message}`;
    }
  }
}

void init();
