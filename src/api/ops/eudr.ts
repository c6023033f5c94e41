/**
 * EUDR due-diligence statements over the API (docs/eudr.md): POST /v1/eudr_dds assesses the plots
 * within the request and answers the signed statement (plots the gateway deadline left out are
 * listed in `partial`); POST /v1/eudr_dds/jobs starts the same work in the background within the
 * statement's own time budget, and GET /v1/eudr_dds/jobs/<job_id> reports its progress and where
 * the finished statement is. GET /v1/eudr_dds/report/<artifact_cid> renders a kept statement as a
 * one-page HTML report a compliance officer can print or file.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { MAX_PLOTS, preparePlots, runStatement } from '../../primitives/eudr/dds.js';
import { jobState, keepStatement, STATEMENT_MEDIA_TYPE, startJob, type JobState } from '../../primitives/eudr/jobs.js';
import { renderStatementHtml, reportFileName } from '../../primitives/eudr/report.js';
import { MAX_CELLS_PER_PLOT } from '../../primitives/eudr/sample.js';
import type { DdsStatement } from '../../primitives/eudr/types.js';
import { artifactBytes } from '../../primitives/rasters/artifacts.js';
import { SvcError } from '../../protocol/errors.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf, Scope } from '../schemas/inputs.js';
import { AnyValue, Closed, Nullable, Signed } from '../schemas/responses.js';

const Plot = Type.Object(
  {
    plot_id: Type.String({ minLength: 1, maxLength: 200, description: 'kept verbatim' }),
    geometry_geojson: Type.Object(
      {},
      { additionalProperties: true, description: 'GeoJSON Polygon (outer ring counter-clockwise, closed), a Point (plots of 4 ha or less, not cattle), or {bbox:[min_lng,min_lat,max_lng,max_lat]}' },
    ),
    country_of_production: Type.String({ minLength: 3, maxLength: 3, description: 'ISO 3166-1 alpha-3, upper case' }),
    commodity_hs: Type.String({ minLength: 6, maxLength: 13, description: 'Combined Nomenclature code of Annex I, 6 digits or more (0102, 0201, 0202 first: cattle)' }),
    quantity_kg: Type.Number({ minimum: 0, description: 'net mass in kg' }),
    commodity_name: Type.Optional(Type.String({ maxLength: 200 })),
    supplier: Type.Optional(Type.String({ maxLength: 200 })),
    request_visual_evidence: Type.Boolean({ default: false, description: 'adds the NDVI timeline 2020 → now, the radar VV change and scene pictures at a few cells' }),
  },
  { additionalProperties: false },
);

const ddsInput = Type.Object(
  {
    plots: Type.Array(Plot, { minItems: 1, maxItems: MAX_PLOTS }),
    cut_off_date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', default: '2020-12-31', description: 'ISO 8601 date; the regulation says 2020-12-31' }),
    forest_baseline_override: OneOf(['jrc_gfc2020_v3', 'hansen_only', 'both'] as const, {
      default: 'jrc_gfc2020_v3',
      description: 'forest at the cut-off by JRC GFC2020 V3, Hansen tree cover 2000 ≥ 10 % (no loss before the cut-off), or either of the two',
    }),
    legality_module: Type.String({ maxLength: 100, default: 'none', description: '"none": legality is outside Earth observation; the statement says so (legality_disclaimer)' }),
    max_cells_per_plot: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CELLS_PER_PLOT, description: 'cells sampled per polygon plot (default about 110 per hectare); a point plot reads 1' })),
    operator: Type.Optional(
      Closed({ name: Type.Optional(Type.String({ maxLength: 300 })), address: Type.Optional(Type.String({ maxLength: 500 })), eori: Type.Optional(Type.String({ maxLength: 17 })) }),
    ),
    scope: Type.Optional(Scope),
  },
  { additionalProperties: false },
);

const Verdict = OneOf(['deforestation_free', 'deforestation_detected', 'no_forest_at_baseline', 'insufficient_data'] as const);
const PlotAssessment = Type.Object(
  {
    plot_id: Type.String(),
    verdict: Verdict,
    reason: Type.String({ description: 'the verdict with the numbers that decided it' }),
    area_ha: Nullable(Type.Number()),
    forest_fraction: Nullable(Type.Number()),
    forest_area_ha: Nullable(Type.Number({ description: 'forest_fraction × area_ha; the 0.5 ha minimum mapping unit applies to it' })),
    loss_cells: Type.Array(Type.Object({ cell: Type.String(), loss_year: Type.Integer(), fact_cid: Type.String() }, { additionalProperties: true })),
    fact_cids: Type.Array(Type.String()),
  },
  { additionalProperties: true, description: 'one plot: its geometry, area, sampled cells, forest and loss figures, verdict and reason, and every fact_cid read' },
);
const Stored = {
  stored: Closed(
    {
      artifact_cid: Type.String(),
      statement_url: Type.String({ description: 'GET: the statement JSON as answered, without this block' }),
      report_url: Type.String({ description: 'GET: the one-page HTML report' }),
      statement_id: Type.String(),
    },
    'where the statement is kept (an artifact shared by the deployment; bounded storage may evict it, so keep your copy)',
  ),
};

const statementOut = Signed(
  {
    schema: Type.String(),
    statement_id: Type.String({ description: 'content id of the statement without its receipt' }),
    generated_at: Type.String(),
    cut_off_date: Type.String(),
    forest_baseline: Type.String(),
    annex_ii: Type.Object({ all_plots_deforestation_free: Type.Boolean() }, { additionalProperties: true, description: 'operator, products, countries, geolocation and risk assessment per plot' }),
    plots: Type.Array(PlotAssessment),
    summary: AnyValue,
    legality_module: Type.String(),
    legality_disclaimer: Type.String(),
    evidence: Closed({ bundle_tokens: Type.Array(Type.String()), fact_count: Type.Integer() }),
    partial: Type.Optional(Closed({ reason: Type.String(), plots_done: Type.Integer(), plots_total: Type.Integer(), plots_missing: Type.Array(Type.String()) })),
    scope: Type.Optional(AnyValue),
    ...Stored,
  },
  'the due-diligence statement',
);

const DESCRIPTION = [
  'Use for an EU Deforestation Regulation due-diligence statement: plots of cattle, cocoa, coffee, oil palm, rubber, soya or wood, each with its geometry, country and HS code.',
  'Each plot is sampled (about 110 cells per hectare by default), the forest at the cut-off read from JRC GFC2020 (or Hansen) and the loss after it from Hansen; the forest area is the forest share of the samples times the geodesic plot area, and the 0.5 ha minimum mapping unit applies to that area.',
  'Returns annex_ii (operator, products, countries, geolocation, risk assessment), plots[] with verdict (deforestation_free, deforestation_detected, no_forest_at_baseline, insufficient_data), the deciding numbers and loss cells, legality_disclaimer, evidence bundles, stored (statement_url, report_url) and one receipt over every fact read.',
  'Invalid geometry, an HS code outside Annex I, a country that is not ISO alpha-3 or a cattle plot given as a point is refused naming the plot, before anything is read.',
  'Many plots or visual evidence: start it with eudr_dds_job_start and poll eudr_dds_job; a statement cut short by the deadline lists the plots left in partial.',
].join(' ');

export const eudrDdsOp = defineOperation({
  name: 'eudr_dds',
  method: 'POST',
  path: '/v1/eudr_dds',
  summary: 'EUDR due-diligence statement: plots in, a signed Annex II statement with per-plot verdicts and evidence out',
  description: DESCRIPTION,
  tags: ['eudr'],
  input: ddsInput,
  output: statementOut,
  mcp: 'full',
  readOnly: false,
  run: async (ctx, input, call) => {
    const plots = preparePlots(input);
    const s = await runStatement(ctx, input, plots, { deadline: call.deadline });
    return { ...s, stored: await keepStatement(ctx, s) };
  },
});

const JobOut = Closed(
  {
    job_id: Type.String(),
    status: OneOf(['running', 'done', 'failed'] as const),
    plots_done: Type.Integer(),
    plots_total: Type.Integer(),
    started_at: Type.String(),
    finished_at: Nullable(Type.String()),
    budget_s: Type.Integer({ description: "the statement's time budget: 60 s plus 110 s per plot with visual evidence, at most 480 s" }),
    result: Nullable(
      Closed({
        statement_id: Type.String(),
        artifact_cid: Type.String(),
        statement_url: Type.String(),
        report_url: Type.String(),
        partial: Type.Boolean(),
        all_plots_deforestation_free: Type.Boolean(),
      }),
    ),
    error: Nullable(Closed({ code: Type.String(), message: Type.String() })),
    poll: Type.String({ description: 'GET this to follow the job' }),
  },
  'a statement being assessed in the background',
);
const withPoll = (j: JobState) => ({ ...j, poll: `/v1/eudr_dds/jobs/${j.job_id}` });

export const eudrJobStartOp = defineOperation({
  name: 'eudr_dds_job_start',
  method: 'POST',
  path: '/v1/eudr_dds/jobs',
  summary: 'Start an EUDR statement in the background (many plots, visual evidence); poll its job',
  description: `Same input as eudr_dds. The plots are checked at once (a bad plot is refused before any work); the answer is the job (status running, plots_total, poll). The work runs within the statement's budget (60 s + 110 s per visual plot, at most 480 s). Next: eudr_dds_job with job_id until status is done, then GET result.statement_url and result.report_url.`,
  tags: ['eudr'],
  input: ddsInput,
  output: JobOut,
  mcp: 'full',
  readOnly: false,
  run: async (ctx, input) => withPoll(startJob(ctx, input)),
});

export const eudrJobOp = defineOperation({
  name: 'eudr_dds_job',
  method: 'GET',
  path: '/v1/eudr_dds/job',
  summary: 'Progress of a background EUDR statement: plots done / total, then where the signed statement is',
  description:
    'Use after eudr_dds_job_start. Returns status (running, done, failed), plots_done, plots_total and, once done, result {statement_url, report_url, partial, all_plots_deforestation_free}. Jobs are held by the responder that runs them, for an hour after they end.',
  tags: ['eudr'],
  input: Type.Object({ job_id: Type.String({ pattern: '^[0-9a-f]{26}$' }) }, { additionalProperties: false }),
  output: JobOut,
  mcp: 'full',
  run: async (ctx, input) => withPoll(await jobState(ctx, input.job_id)),
});

export const EUDR_OPS: readonly Operation[] = [eudrDdsOp, eudrJobStartOp, eudrJobOp];

/** GET /v1/eudr_dds/jobs/:job_id (the job by path) and GET /v1/eudr_dds/report/:cid (the HTML report). */
export async function eudrRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/eudr_dds/jobs/:job_id',
    { schema: { summary: eudrJobOp.summary, tags: ['eudr'], params: { type: 'object', required: ['job_id'], properties: { job_id: { type: 'string', pattern: '^[0-9a-f]{26}$' } } } } },
    async (req: FastifyRequest) => withPoll(await jobState(ctx, (req.params as { job_id: string }).job_id)),
  );
  app.get(
    '/v1/eudr_dds/report/:cid',
    {
      schema: {
        summary: 'A kept EUDR statement as a one-page HTML report (map, verdicts, receipt, how to verify)',
        tags: ['eudr'],
        params: { type: 'object', required: ['cid'], properties: { cid: { type: 'string', minLength: 1, maxLength: 64 } } },
      },
    },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const cid = (req.params as { cid: string }).cid;
      const got = await artifactBytes(ctx, cid);
      if (got.media_type !== STATEMENT_MEDIA_TYPE) throw new SvcError('artifact_not_found', `artifact ${cid} is not an EUDR statement`, { cid });
      const s = JSON.parse(new TextDecoder().decode(got.bytes)) as DdsStatement;
      const html = renderStatementHtml(s, { responderKeyB32: ctx.keys.publicKeyB32, statementUrl: `/v1/artifacts/${cid}` });
      return reply
        .type('text/html; charset=utf-8')
        .header('Content-Disposition', `inline; filename="${reportFileName(s)}"`)
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
        .header('X-Content-Type-Options', 'nosniff')
        .send(html);
    },
  );
}
