/**
 * Readiness: whether a role can serve what it is for right now. Each dependency is probed with a
 * short timeout and reported with its latency; only the ones a role cannot work without gate it.
 * Liveness (/healthz) is separate and never probes anything, so an outage of Postgres makes a role
 * unready (taken out of rotation) without making it look dead (restarted for nothing).
 */
import { sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';

export interface DependencyCheck {
  name: string;
  ok: boolean;
  gatesReadiness: boolean;
  latencyMs: number;
  error?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: DependencyCheck[];
}

export type Probe = () => Promise<DependencyCheck>;

/** A probe slower than this counts as down: a load balancer's own timeout is usually a few seconds. */
export const PROBE_TIMEOUT_MS = 2_000;

export function probe(name: string, gatesReadiness: boolean, check: () => Promise<unknown>, timeoutMs = PROBE_TIMEOUT_MS): Probe {
  return async () => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { name, ok: true, gatesReadiness, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      return {
        name,
        ok: false,
        gatesReadiness,
        latencyMs: Math.round(performance.now() - started),
        error: err instanceof Error ? err.message : String(err),
      };
    } finally {
      clearTimeout(timer);
    }
  };
}

export const postgresProbe = (db: Db, gates: boolean): Probe => probe('postgres', gates, () => db.execute(sql`select 1`));

/** Temporal answers a cheap system-info call; the client connects lazily, so this also connects. */
export const temporalProbe = (client: () => Promise<Client>, gates: boolean): Probe =>
  probe('temporal', gates, async () => (await client()).workflowService.getSystemInfo({}));

export async function runProbes(probes: Probe[]): Promise<ReadinessReport> {
  const checks = await Promise.all(probes.map((p) => p()));
  return { ready: checks.every((c) => c.ok || !c.gatesReadiness), checks };
}

/** How long the public port's /readyz reuses a probe when the configuration does not say. */
export const DEFAULT_READINESS_CACHE_MS = 1_000;

/**
 * A readiness check whose result every caller shares: callers that come while a probe runs wait for
 * that probe, and callers within `ttlMs` of its end get its report. For the public port, where
 * anyone may ask: a flood of /readyz then costs core, Postgres and Temporal at most one probe per
 * `ttlMs`, however many ask. A probe that throws is not kept: the next caller probes again.
 */
export function sharedReadiness(
  check: () => Promise<ReadinessReport>,
  ttlMs: number,
  now: () => number = () => performance.now(),
): () => Promise<ReadinessReport> {
  let running: Promise<ReadinessReport> | undefined;
  let kept: { report: ReadinessReport; at: number } | undefined;
  return () => {
    if (kept && now() - kept.at < ttlMs) return Promise.resolve(kept.report);
    running ??= check()
      .then((report) => {
        kept = { report, at: now() };
        return report;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

/** A worker is ready while it polls its task queue and reaches Postgres. */
export function workerReadiness(state: () => string, db: Db): () => Promise<ReadinessReport> {
  const probes = [postgresProbe(db, true)];
  return async () => {
    const report = await runProbes(probes);
    const current = state();
    const polling: DependencyCheck = {
      name: 'worker',
      ok: current === 'RUNNING',
      gatesReadiness: true,
      latencyMs: 0,
      ...(current === 'RUNNING' ? {} : { error: `worker is ${current}` }),
    };
    return { ready: report.ready && polling.ok, checks: [polling, ...report.checks] };
  };
}

/**
 * Reports from several roles of one process, as one: ready only when each of them is. A dependency
 * two roles probe (Postgres for core and worker) is listed once, failed if either probe failed.
 */
export function mergeReports(reports: ReadinessReport[]): ReadinessReport {
  const byName = new Map<string, DependencyCheck>();
  for (const check of reports.flatMap((r) => r.checks)) {
    const seen = byName.get(check.name);
    if (!seen || (seen.ok && !check.ok))
      byName.set(check.name, { ...check, gatesReadiness: check.gatesReadiness || (seen?.gatesReadiness ?? false) });
  }
  return { ready: reports.every((r) => r.ready), checks: [...byName.values()] };
}
