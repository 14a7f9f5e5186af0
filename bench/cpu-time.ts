/**
 * Where a request's cost goes: CPU time of the service's process, of the Postgres backends serving
 * the benchmark's database, and of the load generator, read around one measurement. On a 2-core
 * machine every side competes for the same cores, so requests per second alone cannot tell which
 * side a slower path spends more on. Linux only (/proc); elsewhere the figures are left out.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type postgres from 'postgres';

/** Clock ticks per second of /proc's CPU counters (USER_HZ: 100 on every common Linux build). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU of a process, in ms; undefined once it is gone or without /proc. */
function processCpuMs(pid: number): number | undefined {
  try {
    // The command name in parentheses may hold spaces: the fields are counted from after it.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

export interface CpuPerRequest {
  /** µs of CPU per request in each part, and their sum. */
  service: number;
  postgres: number;
  loadGenerator: number;
  total: number;
}

/**
 * Starts a reading; `perRequest(n)` after the measurement divides what each part used by the `n`
 * requests it served. The backends are those connected to `database`; the pools are warm before
 * anything is measured, and a backend that left in between would be missed, so none should.
 */
export async function startCpuReading(opts: { servicePid: number; admin: postgres.Sql; database: string }) {
  const backendCpu = async () => {
    const rows = await opts.admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${opts.database}`;
    return new Map(rows.map(({ pid }) => [pid, processCpuMs(pid) ?? 0]));
  };
  const before = { service: processCpuMs(opts.servicePid), backends: await backendCpu(), own: process.cpuUsage() };
  return {
    async perRequest(requests: number): Promise<CpuPerRequest | undefined> {
      const service = processCpuMs(opts.servicePid);
      const own = process.cpuUsage(before.own);
      let backends = 0;
      for (const [pid, ms] of await backendCpu()) backends += ms - (before.backends.get(pid) ?? 0);
      if (before.service === undefined || service === undefined || requests === 0) return undefined;
      const us = (ms: number) => (ms * 1000) / requests;
      const parts = { service: us(service - before.service), postgres: us(backends), loadGenerator: (own.user + own.system) / requests };
      return { ...parts, total: parts.service + parts.postgres + parts.loadGenerator };
    },
  };
}
