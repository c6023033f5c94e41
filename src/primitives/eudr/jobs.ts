/**
 * Statements as long work (docs/eudr.md, "Long statements"): a statement of many plots, or with
 * visual evidence, takes longer than one HTTP request may. POST /v1/eudr_dds/jobs checks the plots
 * at once (a bad plot is refused before any work), answers a job id, and assesses the plots in the
 * background within the statement's time budget (60 s plus 110 s per plot with visual evidence,
 * at most 480 s); GET /v1/eudr_dds/jobs/<id> reports plots done / total, and once done where the
 * signed statement is. Finished statements are kept as artifacts (shared by every responder of a
 * deployment). The job runs in the responder (or worker process) that took it; its record is
 * copied into the store's transient table as it starts, about once a second while plots finish,
 * and when it ends, so any responder or worker sharing the store answers the poll. Records are
 * kept an hour after the job ends; a restart forgets running jobs (their callers start them again).
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../protocol/errors.js';
import { isoSeconds } from '../../protocol/receipt.js';
import type { ServiceContext } from '../context/context.js';
import { type DdsRequest, preparePlots, runStatement } from './dds.js';
import type { DdsStatement } from './types.js';

export const STATEMENT_MEDIA_TYPE = 'application/vnd.svc.eudr-dds+json';
export const BASE_BUDGET_S = 60;
export const VISUAL_BUDGET_S = 110;
export const MAX_BUDGET_S = 480;
/** Jobs one responder runs at once (each bounds its own reads in flight). */
export const MAX_RUNNING_JOBS = 4;
const KEEP_FINISHED_MS = 3_600_000;
/** Namespace of job records in the transient table. */
const JOB_NS = 'eudr_job';
/** Progress is copied to the shared record at most this often. */
const SHARE_EVERY_MS = 1000;

/** Seconds of work a statement may take: 60 + 110 per plot with visual evidence, capped at 480. */
export function budgetSeconds(req: DdsRequest): number {
  const visual = req.plots.filter((p) => p.request_visual_evidence).length;
  return Math.min(MAX_BUDGET_S, BASE_BUDGET_S + VISUAL_BUDGET_S * visual);
}

export interface StoredStatement {
  statement_id: string;
  artifact_cid: string;
  statement_url: string;
  report_url: string;
}

/** Keep a finished statement as an artifact; where to read it and its report. */
export async function keepStatement(ctx: ServiceContext, s: DdsStatement): Promise<StoredStatement> {
  const bytes = new TextEncoder().encode(JSON.stringify(s));
  const { cid } = await ctx.store.artifacts.put(STATEMENT_MEDIA_TYPE, bytes, null);
  return { statement_id: s.statement_id, artifact_cid: cid, statement_url: `/v1/artifacts/${cid}`, report_url: `/v1/eudr_dds/report/${cid}` };
}

export interface JobState {
  job_id: string;
  status: 'running' | 'done' | 'failed';
  plots_done: number;
  plots_total: number;
  started_at: string;
  finished_at: string | null;
  budget_s: number;
  /** When done: where the statement is, and whether it is partial. */
  result: (StoredStatement & { partial: boolean; all_plots_deforestation_free: boolean }) | null;
  error: { code: string; message: string } | null;
}

const jobsByStore = new WeakMap<object, Map<string, JobState>>();
function jobsOf(ctx: ServiceContext): Map<string, JobState> {
  let m = jobsByStore.get(ctx.store);
  if (!m) jobsByStore.set(ctx.store, (m = new Map()));
  const now = Date.now();
  for (const [id, j] of m) if (j.finished_at !== null && now - Date.parse(j.finished_at) > KEEP_FINISHED_MS) m.delete(id);
  return m;
}

/** Check the plots now and start the statement in the background. */
export function startJob(ctx: ServiceContext, req: DdsRequest): JobState {
  const jobs = jobsOf(ctx);
  const running = [...jobs.values()].filter((j) => j.status === 'running').length;
  if (running >= MAX_RUNNING_JOBS) throw new SvcError('overloaded', `${running} statements are being assessed on this responder; try again in a minute`, { retry_after: 60 });
  const plots = preparePlots(req);
  const budget_s = budgetSeconds(req);
  const job: JobState = {
    job_id: randomBytes(13).toString('hex'),
    status: 'running',
    plots_done: 0,
    plots_total: plots.length,
    started_at: isoSeconds(ctx.now()),
    finished_at: null,
    budget_s,
    result: null,
    error: null,
  };
  jobs.set(job.job_id, job);
  const deadline = Date.now() + budget_s * 1000;
  let sharedAt = 0;
  const share = () => {
    sharedAt = Date.now();
    // The longest a record can matter: the budget, then an hour after the end.
    const until = deadline + KEEP_FINISHED_MS + 60_000;
    ctx.store.transients.put(JOB_NS, job.job_id, JSON.stringify(job), until).catch(() => undefined);
  };
  share();
  void (async () => {
    try {
      const s = await runStatement(ctx, req, plots, {
        deadline,
        onPlot: (done) => {
          job.plots_done = done;
          if (Date.now() - sharedAt >= SHARE_EVERY_MS) share();
        },
      });
      const kept = await keepStatement(ctx, s);
      job.result = { ...kept, partial: s.partial !== undefined, all_plots_deforestation_free: s.annex_ii.all_plots_deforestation_free };
      job.status = 'done';
    } catch (err) {
      const e = err instanceof SvcError ? err : new SvcError('internal', 'the statement could not be assembled');
      job.error = { code: e.code, message: e.message };
      job.status = 'failed';
    } finally {
      job.finished_at = isoSeconds(ctx.now());
      share();
    }
  })();
  return job;
}

/** A job's state, from this process or from the shared record; one not found anywhere is not_found. */
export async function jobState(ctx: ServiceContext, id: string): Promise<JobState> {
  let j = jobsOf(ctx).get(id);
  if (!j && /^[0-9a-f]{26}$/.test(id)) {
    const raw = await ctx.store.transients.get(JOB_NS, id);
    const shared = raw === null ? null : (JSON.parse(raw) as JobState);
    if (shared && (shared.finished_at === null || Date.now() - Date.parse(shared.finished_at) <= KEEP_FINISHED_MS)) j = shared;
  }
  if (!j) throw new SvcError('not_found', `job ${id} is not held by this responder (jobs are kept an hour after they end, and a restart forgets running ones)`, { field: 'job_id' });
  return j;
}
