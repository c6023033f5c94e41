/**
 * The one-page report of a due-diligence statement, for a compliance officer to print and file: a
 * self-contained HTML document (inline CSS, an inline SVG map, no scripts, nothing loaded from
 * anywhere) laid out for one A4 page. The report is a reading aid; the signed JSON statement stays
 * the record, so the report says how to verify it. Every string in a statement came from a caller
 * and is escaped wherever it lands.
 */
import { DETAIL_LIMIT, escapeHtml, renderLegend, renderPlotMap, VERDICTS, verdictFill } from './report-map.js';
import type { DdsStatement, PlotAssessment } from './types.js';

export interface ReportOptions {
  /** The responder's public key (base32) that the receipt's signature is checked against. */
  responderKeyB32: string;
  /** Where the statement JSON can be fetched again; shown in the verification steps. */
  statementUrl?: string;
}

export const REPORT_TITLE = 'EU Deforestation Regulation — due-diligence statement';
/** Bundle tokens beyond this many stay in the JSON: the page has no room for them. */
const TOKENS_SHOWN = 12;
const MISSING_SHOWN = 60;

const DASH = '—';
/** A narrow no-break space groups thousands without reading as a decimal mark in any locale. */
const GROUP = '\u202f';

/** Escaped text, or a dash when there is no value. */
function text(value: unknown): string {
  return value === null || value === undefined || value === '' ? DASH : escapeHtml(value);
}

/** Escaped text that may wrap after underscores and dots (verdicts, ids) instead of mid-word. */
function breakable(value: unknown): string {
  return text(value).replace(/([_.:])/g, '$1<wbr>');
}

/** A number with fixed decimals and grouped thousands; a dash for null or a non-number. */
function num(value: unknown, digits: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return DASH;
  const fixed = value.toFixed(digits);
  const [int, frac] = fixed.split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, GROUP);
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

function kv(rows: Array<[string, string]>): string {
  return `<dl class="kv">${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function mono(value: unknown): string {
  return `<span class="mono">${text(value)}</span>`;
}

function headerSection(s: DdsStatement): string {
  const countries = Array.isArray(s.annex_ii?.countries_of_production) ? s.annex_ii.countries_of_production.map(escapeHtml).join(', ') : '';
  return `<header><h1>${escapeHtml(REPORT_TITLE)}</h1><p class="sid"><span class="k">statement_id</span> ${mono(s.statement_id)}</p>${kv([
    ['generated_at', text(s.generated_at)],
    ['cut-off date', text(s.cut_off_date)],
    ['forest baseline', text(s.forest_baseline)],
    ['countries of production', countries || DASH],
    ['schema', text(s.schema)],
  ])}</header>`;
}

function operatorSection(s: DdsStatement): string {
  const op = s.annex_ii?.operator;
  const given = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? escapeHtml(v) : 'not given');
  const body = op
    ? kv([
        ['name', given(op.name)],
        ['address', given(op.address)],
        ['EORI', given(op.eori)],
      ])
    : '<p>not given</p>';
  return `<section><h2>Operator</h2>${body}</section>`;
}

function summarySection(s: DdsStatement): string {
  const by = s.summary?.by_verdict ?? ({} as Record<string, number>);
  const counts = VERDICTS.map((v) => `<li><span class="chip" style="background:${verdictFill(v)}">${escapeHtml(v)}</span> ${num(by[v] ?? 0, 0)}</li>`).join('');
  const free = s.annex_ii?.all_plots_deforestation_free === true;
  const words = free
    ? 'Every plot in this statement is deforestation-free (all_plots_deforestation_free: true).'
    : 'Not every plot in this statement is deforestation-free (all_plots_deforestation_free: false).';
  const totals = `${num(s.summary?.plots, 0)} plots · ${num(s.summary?.cells_sampled, 0)} cells sampled · ${num(s.summary?.facts, 0)} facts read`;
  return `<section><h2>Summary <span class="h2note">${totals}</span></h2><ul class="counts">${counts}</ul><p class="${free ? 'ok' : 'warn'}"><b>Annex II conclusion:</b> ${words}</p></section>`;
}

function commodityCell(p: PlotAssessment): string {
  const name = typeof p.commodity_name === 'string' && p.commodity_name.trim() !== '' ? p.commodity_name : p.commodity;
  return `${text(name)}<br><span class="small">HS ${text(p.commodity_hs)}</span>`;
}

function areaCell(p: PlotAssessment): string {
  return p.geometry?.type === 'Point' ? 'point' : num(p.area_ha, 2);
}

function plotRows(p: PlotAssessment): string {
  const verdict = `<td class="verdict" style="background:${verdictFill(p.verdict)}">${breakable(p.verdict)}</td>`;
  const cells = [
    `<td class="id">${breakable(p.plot_id)}</td>`,
    `<td>${commodityCell(p)}</td>`,
    `<td>${text(p.country_of_production)}</td>`,
    `<td class="n">${num(p.quantity_kg, 1)}</td>`,
    `<td class="n">${areaCell(p)}</td>`,
    `<td class="n">${num(p.forest_area_ha, 2)}</td>`,
    `<td class="n">${num(p.loss_area_ha, 2)}</td>`,
    verdict,
    `<td>${breakable(p.visual_evidence?.verdict)}</td>`,
  ];
  return `<tbody><tr class="row">${cells.join('')}</tr><tr class="why"><td colspan="9">${text(p.reason)}</td></tr></tbody>`;
}

function plotTable(s: DdsStatement): string {
  const plots = Array.isArray(s.plots) ? s.plots : [];
  const shown = plots.slice(0, DETAIL_LIMIT);
  const head =
    '<thead><tr><th class="c-id">plot_id</th><th class="c-com">commodity</th><th class="c-cty">country</th><th class="n c-qty">quantity (kg)</th>' +
    '<th class="n c-area">area (ha)</th><th class="n c-forest">forest (ha)</th><th class="n c-loss">loss (ha)</th><th class="c-v">verdict</th><th class="c-vis">visual verdict</th></tr></thead>';
  const more = plots.length - shown.length;
  const tail = more > 0 ? `<p class="more">${num(more, 0)} more plots are in the JSON statement (${num(plots.length, 0)} in all); this report lists the first ${shown.length}.</p>` : '';
  const empty = plots.length === 0 ? '<p>No plot was assessed.</p>' : '';
  return `<section><h2>Plots</h2>${empty}<table class="plots">${head}${shown.map(plotRows).join('')}</table>${tail}</section>`;
}

function partialSection(s: DdsStatement): string {
  const p = s.partial;
  if (!p) return '';
  const missing = Array.isArray(p.plots_missing) ? p.plots_missing : [];
  const listed = missing.slice(0, MISSING_SHOWN).map(escapeHtml).join(', ');
  const rest = missing.length > MISSING_SHOWN ? ` and ${num(missing.length - MISSING_SHOWN, 0)} more` : '';
  return (
    `<section class="partial"><p><b>Partial statement:</b> only ${num(p.plots_done, 0)} of ${num(p.plots_total, 0)} plots were assessed. ` +
    `Reason: ${text(p.reason)} — not assessed: ${missing.length > 0 ? `<span class="mono">${listed}</span>${rest}` : DASH}</p></section>`
  );
}

function legalitySection(s: DdsStatement): string {
  return `<section><h2>Legality</h2><p class="disclaimer">${text(s.legality_disclaimer)}</p><p class="small">legality module: ${text(s.legality_module)}</p></section>`;
}

function evidenceSection(s: DdsStatement): string {
  const tokens = Array.isArray(s.evidence?.bundle_tokens) ? s.evidence.bundle_tokens : [];
  const list = tokens
    .slice(0, TOKENS_SHOWN)
    .map((t) => `<li class="mono">${text(t)}</li>`)
    .join('');
  const rest = tokens.length > TOKENS_SHOWN ? `<p class="small">${num(tokens.length - TOKENS_SHOWN, 0)} more bundle tokens are in the JSON statement.</p>` : '';
  return `<section><h2>Evidence</h2><p>${num(s.evidence?.fact_count, 0)} facts, cited by ${num(tokens.length, 0)} bundle token${tokens.length === 1 ? '' : 's'}:</p><ul class="tokens">${list}</ul>${rest}</section>`;
}

function receiptSection(s: DdsStatement, opts: ReportOptions): string {
  const r = s.receipt;
  const cids = Array.isArray(r?.fact_cids) ? r.fact_cids.length : null;
  return `<section><h2>Receipt</h2>${kv([
    ['primitive', text(r?.primitive)],
    ['request_id', mono(r?.request_id)],
    ['served_at', text(r?.served_at)],
    ['fact_cids', num(cids, 0)],
    ['signature', mono(r?.signature)],
    ['responder key', mono(opts.responderKeyB32)],
  ])}</section>`;
}

/** Only a plain web address becomes a link; anything else (javascript:, data:) is shown as text. */
function statementLink(url: string | undefined): string {
  if (typeof url !== 'string' || url === '') return '';
  const safe = /^https?:\/\/[^\s]+$/i.test(url);
  return safe ? ` (from <a class="mono" href="${escapeHtml(url)}">${escapeHtml(url)}</a>)` : ` (from <span class="mono">${escapeHtml(url)}</span>)`;
}

function verifySection(opts: ReportOptions): string {
  const steps = [
    `Keep the statement JSON exactly as received${statementLink(opts.statementUrl)}: a changed byte breaks the signature.`,
    'POST it whole to <span class="mono">/v1/verify_receipt</span> on any svc responder, or verify it offline with the protocol module\'s <span class="mono">verifyResponse</span> against the responder key above.',
    'Each plot\'s fact_cids resolve with <span class="mono">POST /v1/fetch {&quot;cid&quot;: &quot;&lt;fact_cid&gt;&quot;}</span>, and every fact carries its own inclusion proof.',
  ];
  return `<section><h2>How to verify</h2><ol class="steps">${steps.map((x) => `<li>${x}</li>`).join('')}</ol></section>`;
}

const CSS = `
@page { size: A4; margin: 12mm }
* { box-sizing: border-box }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; background: #fff }
body { margin: 0; font: 7pt/1.28 "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; color: #111 }
@media screen {
  html { background: #d9dde2 }
  body { width: 210mm; margin: 6mm auto; padding: 12mm; background: #fff }
}
h1 { font-size: 11.5pt; margin: 0 0 1mm }
h2 { font-size: 7.6pt; margin: 1.8mm 0 0.6mm; padding-bottom: 0.3mm; border-bottom: 0.2mm solid #888 }
p { margin: 0.6mm 0 }
ul, ol { margin: 0.6mm 0; padding-left: 4.5mm }
.kv { display: grid; grid-template-columns: max-content 1fr; gap: 0.2mm 3mm; margin: 0 }
.kv dt { color: #555 }
.kv dd { margin: 0; min-width: 0; overflow-wrap: anywhere }
.mono { font-family: "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; font-size: 6.2pt; overflow-wrap: anywhere }
.small { font-size: 6pt; color: #333 }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 0 6mm }
.cols > * { min-width: 0 }
.h2note { font-weight: normal; color: #333 }
header .kv { grid-template-columns: max-content 1fr max-content 1fr max-content 1fr }
.sid { margin: 0 0 0.4mm }
.sid .k { color: #555 }
.counts { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.5mm 3mm }
.chip { display: inline-block; padding: 0 1mm; border: 0.2mm solid #1f2933; border-radius: 0.6mm }
.ok { color: #1b5e20 }
.warn { color: #8e1b1b }
figure { margin: 1.5mm 0 0; break-inside: avoid }
svg.map { display: block; margin: 0 auto; border: 0.2mm solid #999; background: #f5f7f9 }
figcaption { margin-top: 0.6mm; text-align: center; font-size: 6.3pt }
.legend { display: flex; flex-wrap: wrap; justify-content: center; gap: 0.5mm 3mm }
.legend span { white-space: nowrap }
svg.sw { display: inline-block; vertical-align: -0.5mm; margin-right: 0.8mm }
table.plots { width: 100%; border-collapse: collapse; table-layout: fixed; font-size: 6.5pt }
table.plots th { text-align: left; font-weight: bold; border-bottom: 0.3mm solid #444; padding: 0.4mm 0.8mm; vertical-align: bottom }
table.plots td { padding: 0.4mm 0.8mm; vertical-align: top; overflow-wrap: anywhere }
table.plots tbody { break-inside: avoid }
table.plots tr.why td { font-size: 5.6pt; color: #333; padding-top: 0; border-bottom: 0.2mm solid #bbb }
table.plots .n { text-align: right; font-variant-numeric: tabular-nums }
table.plots td.n { white-space: nowrap }
table.plots td.verdict { border-left: 0.2mm solid #fff }
/* Widths add up to 100 %; the verdict column fits deforestation_detected on one line. */
.c-id { width: 12.5% } .c-com { width: 17% } .c-cty { width: 6% } .c-qty { width: 10% } .c-area { width: 7.5% } .c-forest { width: 8.5% } .c-loss { width: 7.5% } .c-v { width: 17% } .c-vis { width: 14% }
.more { font-style: italic }
.partial { border: 0.3mm solid #c77c00; padding: 0.4mm 1.5mm; margin-top: 1.5mm; background: #fff6e0 }
.disclaimer { font-size: 6.6pt }
.tokens { padding-left: 3.5mm }
.steps { font-size: 6.6pt }
.steps li { margin-bottom: 0.2mm }
`;

/** The statement as one self-contained, printable HTML document. */
export function renderStatementHtml(s: DdsStatement, opts: ReportOptions): string {
  const plots = Array.isArray(s.plots) ? s.plots : [];
  const map = renderPlotMap(plots);
  // Defence in depth: even if some text escaped escaping, the page may run nothing and load nothing.
  const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">${csp}<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>EUDR due-diligence statement ${text(s.statement_id)}</title><style>${CSS}</style></head><body>` +
    headerSection(s) +
    `<div class="cols"><div>${operatorSection(s)}${legalitySection(s)}</div><div>${summarySection(s)}${evidenceSection(s)}</div></div>` +
    `<figure>${map.svg}<figcaption><div class="legend">${renderLegend()}</div><div>${escapeHtml(map.note)}</div></figcaption></figure>` +
    plotTable(s) +
    partialSection(s) +
    `<div class="cols">${receiptSection(s, opts)}${verifySection(opts)}</div>` +
    '</body></html>\n'
  );
}

/** A file name for the report: `eudr-dds-<first 12 characters of statement_id>.html`. */
export function reportFileName(s: DdsStatement): string {
  // statement_id is a base32 content id; anything else is replaced so the name is safe in a header or a path.
  const head = String(s.statement_id ?? '')
    .slice(0, 12)
    .replace(/[^A-Za-z0-9_-]/g, '_');
  return `eudr-dds-${head}.html`;
}
