/**
 * Where a phase's time goes, read around it: CPU of this process (gateway, core, worker and load
 * generator all run here), of the Temporal dev server (this process's child) and of the Postgres
 * backends of the run's database, per unit of work; this process's event-loop delay (every
 * statement's answer waits for the loop); and what the service's Postgres sessions were doing,
 * sampled: running, waiting for a lock (the per-customer advisory lock of event intake), or idle
 * inside a transaction (waiting for this process to send the next statement).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type postgres from 'postgres';
import { startCpuReading } from '../cpu-time';

/** The pool the baselines use names itself so, and the samples leave it out. */
export const BASELINE_APPLICATION = 'bench-baseline';

const SAMPLE_EVERY_MS = 50;
/** The loop-delay timer's period: the histogram holds whole periods, so the delay is what exceeds it. */
const LOOP_RESOLUTION_MS = 5;

export interface PhaseProbe {
  /** µs of CPU per unit (this process, Postgres, Temporal), loop delay ms, mean sessions by state. */
  stop(units: number): Promise<ProbeFigures>;
}

export interface ProbeFigures {
  cpuUs: { node: number; postgres: number; temporal: number } | undefined;
  loopDelayMs: { p50: number; p99: number };
  sessions: { active: number; lockWait: number; idleInTransaction: number };
}

/** The Temporal dev server: the only child process this one starts. */
function childPids(): number[] {
  const pids: number[] = [];
  try {
    for (const task of readdirSync('/proc/self/task')) {
      pids.push(...readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    }
  } catch {
    // Not Linux: no CPU split.
  }
  return pids;
}

export async function startPhaseProbe(admin: postgres.Sql, database: string): Promise<PhaseProbe> {
  const [temporalPid] = childPids();
  const cpu = temporalPid ? await startCpuReading({ servicePid: temporalPid, admin, database }) : undefined;
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const totals = { active: 0, lockWait: 0, idleInTransaction: 0 };
  let samples = 0;
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling
      .then(async () => {
        const [row] = await admin<{ active: number; lock_wait: number; idle_in_tx: number }[]>`
        select count(*) filter (where state = 'active' and wait_event_type is distinct from 'Lock')::int as active,
               count(*) filter (where wait_event_type = 'Lock')::int as lock_wait,
               count(*) filter (where state = 'idle in transaction')::int as idle_in_tx
        from pg_stat_activity
        where datname = ${database} and backend_type = 'client backend' and application_name <> ${BASELINE_APPLICATION} and pid <> pg_backend_pid()`;
        totals.active += row!.active;
        totals.lockWait += row!.lock_wait;
        totals.idleInTransaction += row!.idle_in_tx;
        samples += 1;
      })
      .catch(() => undefined); // a lost sample only thins the mean
  }, SAMPLE_EVERY_MS);
  return {
    async stop(units) {
      clearInterval(timer);
      await sampling;
      loop.disable();
      const parts = await cpu?.perRequest(units);
      const mean = (n: number) => n / Math.max(1, samples);
      return {
        // perRequest's "service" is the process it was given (Temporal), its "load generator" this one.
        cpuUs: parts && { node: parts.loadGenerator, postgres: parts.postgres, temporal: parts.service },
        loopDelayMs: {
          p50: Math.max(0, loop.percentile(50) / 1e6 - LOOP_RESOLUTION_MS),
          p99: Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
        },
        sessions: { active: mean(totals.active), lockWait: mean(totals.lockWait), idleInTransaction: mean(totals.idleInTransaction) },
      };
    },
  };
}
