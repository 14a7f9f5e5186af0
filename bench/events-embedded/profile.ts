/**
 * Where the service's main thread spends a time window, from a V8 CPU profile (`node --cpu-prof`,
 * set through NODE_OPTIONS when BENCH_CPU_PROF=1). Each sample is charged to every category found on
 * its stack (inclusive, so the rows overlap) and to the category of its leaf frame (self).
 * Categories: PGlite (its JS and its WebAssembly), the service's own folders, a few packages, Node
 * internals, garbage collection, idle.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const PACKAGES = [
  '@electric-sql/pglite',
  'drizzle-orm',
  '@temporalio',
  'pino',
  'fastify',
  'undici',
  '@connectrpc',
  '@bufbuild',
  'tsx',
  'prom-client',
  'ajv',
];
const FOLDERS = [
  'sandbox',
  'gateway',
  'core/events',
  'core/db',
  'core/temporal',
  'core/services',
  'core',
  'activities',
  'workflows',
  'cli',
  'gen',
];

function category(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(garbage collector)') return '(garbage collector)';
  if (functionName === '(program)') return '(program)';
  if (url.startsWith('wasm://')) return 'PGlite WebAssembly';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length);
    const pkg = PACKAGES.find((p) => rest.startsWith(`${p}/`));
    if (pkg === '@electric-sql/pglite') return 'PGlite JS';
    return pkg ?? 'other packages';
  }
  if (url.startsWith('node:') || (!url.startsWith('file:') && !url.startsWith('/') && url !== '')) return 'Node internals';
  const f = FOLDERS.find((d) => url.includes(`/${d}/`));
  if (f) return `service: ${f}/`;
  if (url === '') return '(native / unattributed)';
  return 'other';
}

export interface ProfileSummary {
  windowMs: number;
  sampledMs: number;
  rows: Array<{ name: string; selfMs: number; inclusiveMs: number }>;
  topSelf: Array<{ name: string; selfMs: number }>;
}

export function readProfile(file: string): Profile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
}

/**
 * The main thread's profile ends when the process exits, whose time the caller knows: a wall-clock
 * window maps onto the profiles' clock (one monotonic clock for every thread of the process) from it.
 */
export function windowTicks(main: Profile, exitAtMs: number, fromMs: number, toMs: number): { from: number; to: number } {
  return { from: main.endTime - (exitAtMs - fromMs) * 1000, to: main.endTime - (exitAtMs - toMs) * 1000 };
}

/** Summarizes the samples of `profile` between the ticks `from` and `to`. */
export function summarizeProfile(profile: Profile, from: number, to: number): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const fnSelf = new Map<string, number>();
  let t = profile.startTime;
  let sampled = 0;
  const stackCats = new Map<number, Set<string>>();
  const catsOf = (id: number): Set<string> => {
    let cached = stackCats.get(id);
    if (cached) return cached;
    const node = byId.get(id)!;
    const up = parent.get(id);
    cached = new Set(up === undefined ? [] : catsOf(up));
    if (node.callFrame.functionName !== '(root)') cached.add(category(node.callFrame));
    stackCats.set(id, cached);
    return cached;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < from || t > to) continue;
    const delta = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const id = profile.samples[i]!;
    const node = byId.get(id)!;
    sampled += delta;
    const leaf = category(node.callFrame);
    self.set(leaf, (self.get(leaf) ?? 0) + delta);
    for (const c of catsOf(id)) inclusive.set(c, (inclusive.get(c) ?? 0) + delta);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(node_modules\/)?/, '')}:${node.callFrame.lineNumber + 1}`;
    fnSelf.set(fn, (fnSelf.get(fn) ?? 0) + delta);
  }
  const names = [...new Set([...self.keys(), ...inclusive.keys()])];
  return {
    windowMs: (to - from) / 1000,
    sampledMs: sampled,
    rows: names
      .map((name) => ({ name, selfMs: self.get(name) ?? 0, inclusiveMs: inclusive.get(name) ?? 0 }))
      .sort((a, b) => b.inclusiveMs - a.inclusiveMs),
    topSelf: [...fnSelf]
      .map(([name, selfMs]) => ({ name, selfMs }))
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, 12),
  };
}
