/**
 * Highest sustainable rate under a p99 SLO: step the offered rate up geometrically until a step
 * breaks (p99 over the SLO, any shedding or timeouts, errors, or the generator itself falling
 * behind), then bisect between the last good and the first bad rate. The number of steps is
 * capped, so the search is bounded in time.
 */
import { realClock } from './clock.js';
import { LATENCY_BASIS, type LoadReport } from './report.js';
import { runLoad, type LoadOptions } from './runLoad.js';

/** Options of {@link findMax}: those of {@link runLoad} less the rate and duration, plus the steps and the SLO. */
export interface FindMaxOptions extends Omit<LoadOptions, 'rate' | 'durationMs' | 'label'> {
  /** The SLO: a step passes only if its success-only p99 is at most this. */
  readonly sloP99Ms: number;
  /** Measured part of each step (default 10 s); `warmupMs` precedes it (default 2 s). */
  readonly stepDurationMs?: number;
  /** Default 50/s. */
  readonly startRate?: number;
  /** Ramp factor between steps before the first failure (default 2). */
  readonly growth?: number;
  /** Total steps, ramp and refinement together (default 14). */
  readonly maxSteps?: number;
  /** Never offer more than this (default 20 000/s). */
  readonly maxRate?: number;
  /** Stop refining when (bad - good) / good is at most this (default 0.05). */
  readonly tolerance?: number;
  /** Pause between steps so the server drains its queues (default 1 s). */
  readonly cooldownMs?: number;
  /** Errors tolerated per step, as a fraction of sent (default 0.001). */
  readonly maxErrorFraction?: number;
  /** Generator lateness tolerated per step, as a fraction of sent (default 0.05). */
  readonly maxLateFraction?: number;
  /** Called after each step (the CLI prints it). */
  readonly onStep?: (step: FindMaxStep, index: number) => void;
}

/** One step of {@link findMax}: the rate offered, whether it passed, and its figures. */
export interface FindMaxStep {
  readonly rate: number;
  readonly phase: 'ramp' | 'refine';
  readonly pass: boolean;
  readonly reasons: readonly string[];
  readonly sent_rate: number;
  readonly achieved_rate: number;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly p999_ms: number | null;
  readonly max_ms: number | null;
  readonly ok: number;
  readonly shed: number;
  readonly timeout: number;
  readonly error: number;
  readonly late: number;
  readonly percentile_curve: LoadReport['percentile_curve'];
  readonly report: LoadReport;
}

/** What {@link findMax} found: the highest rate that passed, and every step. */
export interface FindMaxResult {
  readonly tool: 'prescore-load-find-max';
  readonly schema_version: 1;
  readonly started_at: string;
  readonly endpoint: string;
  readonly slo_p99_ms: number;
  readonly step_duration_s: number;
  readonly warmup_s: number;
  /** The highest passing rate, or null when even the lowest step failed. */
  readonly max_sustainable_rate: number | null;
  /** What stopped the search: `server` (a step failed on server-side criteria), `client`, `max-rate`, `steps`, `interrupted`. */
  readonly limited_by: string;
  readonly latency_basis: string;
  readonly steps: readonly FindMaxStep[];
  /** Upper bound of the search's duration given the step cap. */
  readonly bound_s: number;
}

/** Whether a step passed: p99 within the SLO, nothing shed, few errors and an achieved rate near the offered one. */
export function judgeStep(r: LoadReport, sloP99Ms: number, maxErrorFraction = 0.001, maxLateFraction = 0.05): { pass: boolean; reasons: string[]; clientBound: boolean } {
  const c = r.counts;
  const reasons: string[] = [];
  const p99 = r.latency_ms.p99;
  if (c.ok === 0 || p99 === null) reasons.push('no ok responses');
  else if (p99 > sloP99Ms) reasons.push(`p99 ${p99} ms > ${sloP99Ms} ms`);
  if (c.shed > 0) reasons.push(`shed ${c.shed}`);
  if (c.timeout > 0) reasons.push(`timeouts ${c.timeout}`);
  if (c.error > maxErrorFraction * c.sent) reasons.push(`errors ${c.error}`);
  if (c.sent > 0 && r.achieved_rate < 0.95 * r.sent_rate) reasons.push(`achieved ${r.achieved_rate}/s < 95% of sent`);
  const clientBound = c.sent > 0 && c.late > maxLateFraction * c.sent;
  if (clientBound) reasons.push(`generator late ${c.late}/${c.sent} (client-bound)`);
  return { pass: reasons.length === 0, reasons, clientBound };
}

function roundRate(r: number): number {
  return r >= 100 ? Math.round(r) : Math.round(r * 10) / 10;
}

/**
 * The highest Poisson rate the server holds within the p99 SLO: doubles until a step fails, then bisects.
 *
 * @example
 * ```ts
 * const { max_sustainable_rate } = await findMax({ url: 'http://127.0.0.1:8080', queries, sloP99Ms: 50 });
 * ```
 */
export async function findMax(o: FindMaxOptions): Promise<FindMaxResult> {
  if (!(o.sloP99Ms > 0)) throw new Error(`--slo-p99 must be a positive duration, got ${o.sloP99Ms}`);
  const stepDurationMs = o.stepDurationMs ?? 10_000;
  const warmupMs = o.warmupMs ?? 2000;
  const growth = o.growth ?? 2;
  const maxSteps = o.maxSteps ?? 14;
  const maxRate = o.maxRate ?? 20_000;
  const tolerance = o.tolerance ?? 0.05;
  const cooldownMs = o.cooldownMs ?? 1000;
  const timeoutMs = o.timeoutMs ?? 2000;
  let rate = o.startRate ?? 50;
  if (!(rate > 0)) throw new Error(`--start-rate must be positive, got ${rate}`);
  if (!(growth > 1)) throw new Error(`growth must be > 1, got ${growth}`);
  if (!(stepDurationMs > 0)) throw new Error('--step-duration must be positive');
  rate = Math.min(rate, maxRate);
  const clock = o.clock ?? realClock;

  const startedAt = new Date().toISOString();
  const steps: FindMaxStep[] = [];
  let good: number | null = null;
  let bad: number | null = null;
  let limitedBy = 'steps';
  let endpoint = o.url;
  // Each step goes on through the queries where the last one stopped (see LoadOptions.firstQuery).
  let firstQuery = o.firstQuery ?? 0;

  for (let i = 0; i < maxSteps; i++) {
    if (o.signal?.aborted === true) {
      limitedBy = 'interrupted';
      break;
    }
    const phase: FindMaxStep['phase'] = bad === null ? 'ramp' : 'refine';
    const report = await runLoad({
      ...o,
      rate,
      durationMs: stepDurationMs,
      warmupMs,
      timeoutMs,
      firstQuery,
      label: `step ${i + 1}/${maxSteps} @${rate}/s`,
    });
    firstQuery += report.counts_all.sent;
    endpoint = report.config.endpoint;
    const verdict = judgeStep(report, o.sloP99Ms, o.maxErrorFraction, o.maxLateFraction);
    const L = report.latency_ms;
    const step: FindMaxStep = {
      rate,
      phase,
      pass: verdict.pass && !report.interrupted,
      reasons: report.interrupted ? [...verdict.reasons, 'interrupted'] : verdict.reasons,
      sent_rate: report.sent_rate,
      achieved_rate: report.achieved_rate,
      p50_ms: L.p50,
      p99_ms: L.p99,
      p999_ms: L.p999,
      max_ms: L.max,
      ok: report.counts.ok,
      shed: report.counts.shed,
      timeout: report.counts.timeout,
      error: report.counts.error,
      late: report.counts.late,
      percentile_curve: report.percentile_curve,
      report,
    };
    steps.push(step);
    o.onStep?.(step, i);
    if (report.interrupted) {
      limitedBy = 'interrupted';
      break;
    }
    if (step.pass) good = rate;
    else {
      bad = rate;
      limitedBy = verdict.clientBound ? 'client' : 'server';
    }

    let next: number;
    if (bad === null) {
      if (rate >= maxRate) {
        limitedBy = 'max-rate';
        break;
      }
      next = Math.min(maxRate, rate * growth);
    } else if (good === null) {
      // Even the first rate failed: halve until something passes.
      next = rate / growth;
      if (next < 0.5) break;
    } else {
      if ((bad - good) / good <= tolerance) break;
      next = (good + bad) / 2;
    }
    rate = roundRate(next);
    if (rate === good || rate === bad) break;
    if (cooldownMs > 0) await new Promise<void>((resolve) => clock.after(cooldownMs, resolve));
  }
  if (good !== null && bad === null && limitedBy !== 'interrupted' && limitedBy !== 'max-rate') limitedBy = 'steps';

  return {
    tool: 'prescore-load-find-max',
    schema_version: 1,
    started_at: startedAt,
    endpoint,
    slo_p99_ms: o.sloP99Ms,
    step_duration_s: stepDurationMs / 1000,
    warmup_s: warmupMs / 1000,
    max_sustainable_rate: good,
    limited_by: limitedBy,
    latency_basis: LATENCY_BASIS,
    steps,
    bound_s: findMaxBoundS(maxSteps, warmupMs, stepDurationMs, timeoutMs, cooldownMs),
  };
}

/** Worst-case duration of a search: every step runs to its hard deadline. */
export function findMaxBoundS(maxSteps: number, warmupMs: number, stepMs: number, timeoutMs: number, cooldownMs: number): number {
  return Math.ceil((maxSteps * (warmupMs + stepMs + timeoutMs + 1000 + cooldownMs + 500)) / 1000);
}
