/**
 * A V8 CPU profile of one phase of a benchmark, written when BENCH_PROFILE_DIR names a folder:
 * `node --cpu-prof` would cover start-up and every phase at once, while the question is what one
 * phase's units of work cost. Open the file in Chrome DevTools (Performance) or any .cpuprofile
 * viewer. The sampler counts wall time, so a thread preempted inside a system call (a write to a
 * Postgres socket waking its backend) shows in that call: compare with the CPU the probes print.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

const DIR = process.env.BENCH_PROFILE_DIR;

/** Starts profiling when BENCH_PROFILE_DIR is set; the returned function stops and writes `<name>.cpuprofile`. */
export async function profilePhase(name: string): Promise<() => Promise<void>> {
  if (!DIR) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(DIR, { recursive: true });
    const file = path.join(DIR, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`bench: wrote the ${name} phase's CPU profile to ${file}`);
  };
}
