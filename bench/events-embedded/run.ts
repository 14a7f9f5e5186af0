/**
 * bench/events-embedded: the event latency target on plain `npm start` (`vps serve --role all` with
 * the embedded defaults), with the events arriving as they do in production. A third party comments
 * through the sandbox emulator's control API at a paced rate; the emulator pushes the official
 * webhook to the service (which `--role all` subscribes by itself); the service stores the event
 * and delivers it to three loopback webhook endpoints and one SSE stream. Each comment's text is
 * unique, so every arrival is matched to the moment its comment was due.
 *
 * Baseline, in the same run and at the same rate and duration just before each service phase: the
 * emulator's own path. The emulator's COMMENT subscription is pointed at a bare loopback receiver
 * (answers 200, does nothing else) instead of the service's platform receiver, and the same
 * comments are injected: injection to arrival there is what the emulator (control call, comment
 * store, signing, the push over loopback) costs on this machine, in the same process as the service,
 * before the service does any work. The service cannot deliver sooner than that.
 *
 * Run: node --import tsx bench/events-embedded/run.ts
 * Settings (environment): BENCH_PHASES ("rate x seconds" list, default "5x10,20x10,100x20"),
 * BENCH_WAIT_S (60: bounded wait for stragglers after each service phase), BENCH_BASELINE_WAIT_S
 * (30), BENCH_CONCURRENCY (100 injections in flight at most), BENCH_BASELINE (1; 0 skips it),
 * BENCH_POLL_PUSHES (1: read the emulator's push records every 2 s for the intake breakdown),
 * BENCH_LOG_LEVEL (info, the default of `npm start`), BENCH_KEEP (0; 1 keeps the data dir and log),
 * BENCH_TIMEOUT_S (600: hard stop of the whole run), BENCH_TARGET_RATE (100: the rate the target is
 * judged at), BENCH_STRICT (0; 1 exits 1 when the target is missed), BENCH_CPU_PROF (0; 1 runs the
 * service under `node --cpu-prof` and prints where its main thread spent each service phase),
 * BENCH_ISOLATION (1: after the phases, one more service phase at BENCH_TARGET_RATE for its phase's
 * duration with a 4th endpoint answering 500 and a 5th never answering beside the three; 0 skips it).
 *
 * Issue 33's target, judged at BENCH_TARGET_RATE in the plain phase and the isolation phase: push
 * p99 < 250 ms to the healthy endpoints, and the service process (the emulator runs in it) under 1
 * core.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { readProfile, summarizeProfile, windowTicks } from './profile';
import { openEventStream, startReceiver, textOf, type Receiver } from './receivers';
import { machineJiffies, startEmbeddedService, treeCpuSeconds, type EmbeddedService } from './service';

// ---------------------------------------------------------------- settings

function envInt(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min) throw new Error(`${name}=${raw}: expected an integer >= ${min}`);
  return v;
}

function parsePhases(raw: string): Array<{ rate: number; seconds: number }> {
  return raw.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*x\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) throw new Error(`BENCH_PHASES: "${part}" is not "<rate per s>x<seconds>"`);
    return { rate: Number(m[1]), seconds: Number(m[2]) };
  });
}

const settings = {
  phases: parsePhases(process.env.BENCH_PHASES ?? '5x10,20x10,100x20'),
  waitS: envInt('BENCH_WAIT_S', 60),
  baselineWaitS: envInt('BENCH_BASELINE_WAIT_S', 30),
  concurrency: envInt('BENCH_CONCURRENCY', 100),
  baseline: process.env.BENCH_BASELINE !== '0',
  pollPushes: process.env.BENCH_POLL_PUSHES !== '0',
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
  keep: process.env.BENCH_KEEP === '1',
  timeoutS: envInt('BENCH_TIMEOUT_S', 600),
  targetRate: envInt('BENCH_TARGET_RATE', 100),
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
  isolation: process.env.BENCH_ISOLATION !== '0',
  endpoints: 3,
};
const TARGET = { p50: 50, p99: 250 };
/** Issue 33: push p99 and the service process's CPU, at the target rate, with and without the bad endpoints. */
const CPU_TARGET = { p99: 250, cores: 1 };
const ACCOUNT = 'sandbox-business-0001'; // core/embedded/seed.ts DEMO_ACCOUNTS.video: the demo video seat's account
const SANDBOX_APP = { appId: 'vps-sandbox-app', secret: 'vps-sandbox-app-secret' }; // core/upstream/settings.ts
const RUN_ID = randomBytes(3).toString('hex');

// ---------------------------------------------------------------- figures

/** Percentile of `values`, where Infinity stands for "never arrived within the wait". */
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function ms(v: number, waitS?: number): string {
  if (Number.isNaN(v)) return '-';
  if (v === Infinity) return waitS ? `>${waitS}s` : 'never';
  return v >= 10_000 ? `${(v / 1000).toFixed(1)}s` : String(Math.round(v));
}

function pair(values: number[], waitS?: number): string {
  return `${ms(percentile(values, 50), waitS)} / ${ms(percentile(values, 99), waitS)}`;
}

function ratio(service: number, base: number): string {
  if (!Number.isFinite(service)) return 'inf';
  if (!Number.isFinite(base) || base <= 0) return '-';
  return (service / base).toFixed(1);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const loadAvg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));
const utc = (t = Date.now()) => new Date(t).toISOString().replace('T', ' ').slice(0, 19);

// ---------------------------------------------------------------- state

interface Comment {
  text: string;
  phase: string;
  due: number;
  sent?: number;
  ack?: number;
  status?: number;
  error?: string;
  /** When the service's platform receiver answered the emulator's push with 200 (the emulator's record). */
  pushAnswered?: number;
  pushAttempts?: number;
}

const comments = new Map<string, Comment>();
let service: EmbeddedService | undefined;
const receivers: Receiver[] = [];
let bare: Receiver | undefined;
let stream: Awaited<ReturnType<typeof openEventStream>> | undefined;
let aborted = false;
const out: string[] = [];
const say = (line = '') => {
  out.push(line);
  process.stdout.write(`${line}\n`);
};

const agent = new Agent({ connections: settings.concurrency, keepAliveTimeout: 30_000 });

async function call<T>(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: T }> {
  const res = await request(url, {
    method,
    dispatcher: agent,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.statusCode, json: json as T };
}

/** Points the emulator's COMMENT pushes at `url`, through the official business/webhook/update. */
async function subscribeComments(url: string): Promise<void> {
  const res = await call<{ code: number; message: string }>('POST', `${service!.sandbox}/open_api/v1.3/business/webhook/update/`, {
    app_id: SANDBOX_APP.appId,
    secret: SANDBOX_APP.secret,
    event_type: 'COMMENT',
    callback_url: url,
  });
  if (res.status !== 200 || res.json.code !== 0)
    throw new Error(`webhook/update to ${url} refused: HTTP ${res.status} ${JSON.stringify(res.json)}`);
}

/** The emulator's records of its pushes (its last 1,000): when the service answered each with 200. */
async function pollPushes(): Promise<void> {
  const res = await call<{
    pushes: Array<{ event: string; callbackUrl: string; body: string; attempts: Array<{ at: string; status: number | null }> }>;
  }>('GET', `${service!.sandbox}/_sandbox/webhooks/pushes`);
  for (const p of res.json.pushes ?? []) {
    if (p.event !== 'comment.update' || p.callbackUrl !== service!.platformWebhookUrl) continue;
    const text = textOf('official-push', p.body).text;
    const c = text === undefined ? undefined : comments.get(text);
    if (!c) continue;
    c.pushAttempts = p.attempts.length;
    const ok = p.attempts.find((a) => a.status === 200);
    if (ok) c.pushAnswered = Date.parse(ok.at);
  }
}

// ---------------------------------------------------------------- metrics and logs of the service

interface Scrape {
  at: number;
  values: Map<string, number>;
}

async function scrapeMetrics(): Promise<Scrape> {
  const values = new Map<string, number>();
  try {
    const res = await call<string>('GET', `${service!.ops}/metrics`);
    for (const line of String(res.json).split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const sp = line.lastIndexOf(' ');
      values.set(line.slice(0, sp), Number(line.slice(sp + 1)));
    }
  } catch {
    /* the figures are extras */
  }
  return { at: Date.now(), values };
}

/** A metric's value by name, whatever its labels; NaN when absent. */
function metric(s: Scrape, name: string): number {
  for (const [k, v] of s.values) if (k === name || k.startsWith(`${name}{`)) return v;
  return NaN;
}

/** The gateway's own `request` log lines for the platform receiver within [from, to]: ms each. */
function routeTimesFromLog(from: number, to: number, route: string): { ms: number[]; non200: number } {
  const times: number[] = [];
  let non200 = 0;
  try {
    for (const line of fs.readFileSync(service!.logFile, 'utf8').split('\n')) {
      if (!line.includes(`"route":"${route}"`)) continue;
      try {
        const entry = JSON.parse(line) as { time: string; ms: number; status: number };
        const t = Date.parse(entry.time);
        if (t < from || t > to) continue;
        times.push(entry.ms);
        if (entry.status !== 200) non200 += 1;
      } catch {
        /* not a log line */
      }
    }
  } catch {
    /* no log */
  }
  return { ms: times, non200 };
}

// ---------------------------------------------------------------- phases

interface PhaseResult {
  kind: 'baseline' | 'service';
  /** A failing and a hanging endpoint were subscribed beside the healthy ones. */
  isolation: boolean;
  rate: number;
  seconds: number;
  injected: number;
  injectErrors: number;
  senderLagP99: number;
  ackP50: number;
  ackP99: number;
  /** Per receiver: delivered count. */
  delivered: number[];
  sseDelivered: number;
  /** Latencies (Infinity = not within the wait) pooled over the receivers, and of SSE. */
  push: number[];
  sse: number[];
  missingPush: number;
  missingSse: number;
  intake: number[];
  ingest: number[];
  deliverAfterIngest: number[];
  pushRetries: number;
  routeMs: number[];
  routeNon200: number;
  waitedMs: number;
  cpu: { service: number; children: number; bench: number; machineBusy: number };
  loopLagP99: number;
  loopLagMax: number;
  startedAt: number;
  endedAt: number;
  load: string;
}

async function inject(phase: string, rate: number, seconds: number): Promise<Comment[]> {
  const n = Math.max(1, Math.round(rate * seconds));
  const list: Comment[] = [];
  const t0 = Date.now() + 20;
  let inFlight = 0;
  let freed: (() => void) | undefined;
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < n && !aborted; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 1) await sleep(wait);
    while (inFlight >= settings.concurrency) await new Promise<void>((r) => (freed = r));
    const c: Comment = { text: `bench ${phase} ${i} ${RUN_ID}`, phase, due, sent: Date.now() };
    comments.set(c.text, c);
    list.push(c);
    inFlight += 1;
    pending.push(
      call<unknown>('POST', `${service!.sandbox}/_sandbox/accounts/${ACCOUNT}/comments`, { text: c.text })
        .then((res) => {
          c.ack = Date.now();
          c.status = res.status;
          if (res.status !== 200) c.error = `HTTP ${res.status}: ${JSON.stringify(res.json).slice(0, 200)}`;
        })
        .catch((err: unknown) => {
          c.error = (err as Error).message;
        })
        .finally(() => {
          inFlight -= 1;
          freed?.();
          freed = undefined;
        }),
    );
  }
  await Promise.all(pending);
  return list;
}

async function runPhase(kind: 'baseline' | 'service', rate: number, seconds: number, isolation = false): Promise<PhaseResult> {
  const phase = `${kind === 'baseline' ? 'b' : isolation ? 'i' : 's'}${rate}`;
  const load = loadAvg();
  say(
    `[${utc()}] ${kind} ${rate}/s for ${seconds} s${isolation ? ', a failing and a hanging endpoint beside' : ''} (load average ${load})`,
  );
  const m0 = await scrapeMetrics(); // also resets the event-loop histogram of the service's process
  const cpu0 = { tree: treeCpuSeconds(service!.pid), bench: process.cpuUsage(), machine: machineJiffies() };
  const startedAt = Date.now();
  let polling = true;
  const poller =
    kind === 'service' && settings.pollPushes
      ? (async () => {
          while (polling && !aborted) {
            await sleep(2_000);
            await pollPushes().catch(() => undefined);
          }
        })()
      : Promise.resolve();

  const list = await inject(phase, rate, seconds);
  const injectedEnd = Date.now();
  const ok = list.filter((c) => c.status === 200);
  const targets: Array<Map<string, number>> =
    kind === 'service' ? [...receivers.map((r) => r.arrivals), stream!.arrivals] : [bare!.arrivals];
  const allArrived = () => ok.every((c) => targets.every((t) => t.has(c.text)));
  const waitS = kind === 'service' ? settings.waitS : settings.baselineWaitS;
  const waitDeadline = Date.now() + waitS * 1000;
  while (!allArrived() && Date.now() < waitDeadline && !aborted) await sleep(50);
  const waitedMs = Date.now() - injectedEnd;
  const endedAt = Date.now();
  const cpu1 = { tree: treeCpuSeconds(service!.pid), bench: process.cpuUsage(cpu0.bench), machine: machineJiffies() };
  const m1 = await scrapeMetrics();
  polling = false;
  await poller;
  if (kind === 'service' && settings.pollPushes) await pollPushes().catch(() => undefined);

  const lat = (t: Map<string, number>, c: Comment) => {
    const at = t.get(c.text);
    return at === undefined ? Infinity : at - c.due;
  };
  const pushTargets = kind === 'service' ? receivers.map((r) => r.arrivals) : [bare!.arrivals];
  const push = ok.flatMap((c) => pushTargets.map((t) => lat(t, c)));
  const sse = kind === 'service' ? ok.map((c) => lat(stream!.arrivals, c)) : [];
  const receivedAtOf = (c: Comment) => receivers.map((r) => r.receivedAt.get(c.text)).find((v) => v !== undefined);
  const ingest = kind === 'service' ? ok.map((c) => receivedAtOf(c)).map((v, i) => (v === undefined ? Infinity : v - ok[i]!.due)) : [];
  const deliverAfterIngest =
    kind === 'service'
      ? ok.flatMap((c) => {
          const r0 = receivedAtOf(c);
          return r0 === undefined ? [] : receivers.flatMap((r) => (r.arrivals.has(c.text) ? [r.arrivals.get(c.text)! - r0] : []));
        })
      : [];
  const intake = kind === 'service' ? ok.filter((c) => c.pushAnswered !== undefined).map((c) => c.pushAnswered! - c.due) : [];
  const route = kind === 'service' ? routeTimesFromLog(startedAt, endedAt, '/webhooks/vplat') : { ms: [], non200: 0 };
  const cpuSecs = cpu1.tree.self - cpu0.tree.self + 0;
  const wall = (endedAt - startedAt) / 1000;
  const machine = (cpu1.machine.busy - cpu0.machine.busy) / Math.max(1, cpu1.machine.total - cpu0.machine.total);
  const result: PhaseResult = {
    kind,
    isolation,
    rate,
    seconds,
    injected: list.length,
    injectErrors: list.length - ok.length,
    senderLagP99: percentile(
      list.map((c) => (c.sent ?? c.due) - c.due),
      99,
    ),
    ackP50: percentile(
      list.filter((c) => c.ack).map((c) => c.ack! - c.due),
      50,
    ),
    ackP99: percentile(
      list.filter((c) => c.ack).map((c) => c.ack! - c.due),
      99,
    ),
    delivered: pushTargets.map((t) => ok.filter((c) => t.has(c.text)).length),
    sseDelivered: kind === 'service' ? ok.filter((c) => stream!.arrivals.has(c.text)).length : 0,
    push,
    sse,
    missingPush: push.filter((v) => v === Infinity).length,
    missingSse: sse.filter((v) => v === Infinity).length,
    intake,
    ingest,
    deliverAfterIngest,
    pushRetries: ok.filter((c) => (c.pushAttempts ?? 1) > 1).length,
    routeMs: route.ms,
    routeNon200: route.non200,
    waitedMs,
    cpu: {
      service: cpuSecs / wall,
      children: (cpu1.tree.children - cpu0.tree.children) / wall,
      bench: (cpu1.bench.user + cpu1.bench.system) / 1e6 / wall,
      machineBusy: machine,
    },
    loopLagP99: metric(m1, 'nodejs_eventloop_lag_p99_seconds') * 1000,
    loopLagMax: metric(m1, 'nodejs_eventloop_lag_max_seconds') * 1000,
    startedAt,
    endedAt,
    load,
  };
  void m0;
  printPhase(result);
  return result;
}

function printPhase(r: PhaseResult): void {
  const waitS = r.kind === 'service' ? settings.waitS : settings.baselineWaitS;
  const errors = r.injectErrors
    ? ` (${r.injectErrors} refused: ${[...comments.values()].find((c) => c.error && c.phase === `${r.kind === 'baseline' ? 'b' : 's'}${r.rate}`)?.error})`
    : '';
  say(
    `  injected ${r.injected}${errors}; control call answered p50 / p99 ${ms(r.ackP50)} / ${ms(r.ackP99)} ms after due; sender lag p99 ${ms(r.senderLagP99)} ms`,
  );
  if (r.kind === 'baseline') {
    say(
      `  emulator push to the bare receiver: delivered ${r.delivered[0]}/${r.injected - r.injectErrors}, injection to receipt p50 / p99 ${pair(r.push, waitS)} ms; missing ${r.missingPush}`,
    );
  } else {
    const expected = r.injected - r.injectErrors;
    say(`  delivered per receiver ${r.delivered.map((d) => `${d}/${expected}`).join(', ')}; SSE ${r.sseDelivered}/${expected}`);
    say(`  push (3 receivers pooled) p50 / p99 ${pair(r.push, waitS)} ms; SSE p50 / p99 ${pair(r.sse, waitS)} ms`);
    say(
      `  never arrived within ${waitS} s of the last injection: push ${r.missingPush} of ${r.push.length}, SSE ${r.missingSse} of ${r.sse.length}`,
    );
    say(
      `  where the time goes, p50 / p99 ms: due -> service answered the emulator's push ${pair(r.intake)} (${r.intake.length} seen, ${r.pushRetries} pushed more than once); ` +
        `due -> event received_at ${pair(r.ingest, waitS)}; received_at -> receipt ${pair(r.deliverAfterIngest)}; /webhooks/vplat handler (gateway log) ${pair(r.routeMs)} over ${r.routeMs.length} requests, ${r.routeNon200} not 200`,
    );
  }
  say(
    `  CPU, cores: service process ${r.cpu.service.toFixed(2)}, its children (Temporal dev server) ${r.cpu.children.toFixed(2)}, this bench ${r.cpu.bench.toFixed(2)}; machine busy ${(r.cpu.machineBusy * 100).toFixed(0)} % of ${os.cpus().length} cores; ` +
      `service event-loop lag p99 / max ${ms(r.loopLagP99)} / ${ms(r.loopLagMax)} ms; waited ${(r.waitedMs / 1000).toFixed(1)} s after the last injection`,
  );
}

// ---------------------------------------------------------------- main

let dataDir = '';
let profDir = '';
let cleaned: Promise<void> | undefined;
let stopping: Promise<void> | undefined;
function stopService(): Promise<void> {
  stopping ??= (async () => {
    stream?.close();
    if (service) {
      const stopped = await service.stop(20_000);
      say(`service stopped: ${stopped.how} after ${stopped.ms} ms`);
    }
  })();
  return stopping;
}
async function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    await stopService();
    if (profDir && !settings.keep) fs.rmSync(profDir, { recursive: true, force: true });
    await Promise.all([...receivers, ...(bare ? [bare] : [])].map((r) => r.close().catch(() => undefined)));
    await agent.close().catch(() => undefined);
    if (dataDir && !settings.keep) fs.rmSync(dataDir, { recursive: true, force: true });
    if (service && !settings.keep) fs.rmSync(service.logFile, { force: true });
    else if (service) say(`kept: data dir ${dataDir}, log ${service.logFile}`);
  })();
  return cleaned;
}

function logSummary(): string[] {
  if (!service) return [];
  const levels = new Map<number, number>();
  const warnings = new Map<string, number>();
  try {
    for (const line of fs.readFileSync(service.logFile, 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const e = JSON.parse(line) as { level: number; msg: string; component?: string; err?: { message?: string } };
        levels.set(e.level, (levels.get(e.level) ?? 0) + 1);
        if (e.level >= 40) {
          const key = `${e.level >= 50 ? 'error' : 'warn'} ${e.component ?? ''}: ${e.msg}${e.err?.message ? ` (${e.err.message.slice(0, 120)})` : ''}`;
          warnings.set(key, (warnings.get(key) ?? 0) + 1);
        }
      } catch {
        /* not JSON */
      }
    }
  } catch {
    return [];
  }
  const names: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  const lines = [
    `service log: ${[...levels]
      .sort((a, b) => a[0] - b[0])
      .map(([l, n]) => `${names[l] ?? l} ${n}`)
      .join(', ')}`,
  ];
  for (const [k, n] of [...warnings].sort((a, b) => b[1] - a[1]).slice(0, 8)) lines.push(`  ${n} x ${k}`);
  return lines;
}

/** Subscribes a failing and a hanging receiver for the isolation phase; `remove` deletes them and frees the held requests. */
async function addBadEndpoints(auth: Record<string, string>): Promise<{ remove(): Promise<void> }> {
  const bad = [await startReceiver('fail', 'service-event', 'fail'), await startReceiver('hang', 'service-event', 'hang')];
  const ids: string[] = [];
  for (const r of bad) {
    const res = await call<{ code: number; data?: { id: string } }>(
      'POST',
      `${service!.gateway}/v1/webhook-endpoints`,
      { url: r.url, eventTypes: ['*'] },
      auth,
    );
    if (res.status >= 300 || res.json.code !== 0 || !res.json.data)
      throw new Error(`registering ${r.url} failed: HTTP ${res.status} ${JSON.stringify(res.json)}`);
    ids.push(res.json.data.id);
  }
  return {
    async remove() {
      for (const id of ids) await call('DELETE', `${service!.gateway}/v1/webhook-endpoints/${id}`, undefined, auth).catch(() => undefined);
      await Promise.all(bad.map((r) => r.close()));
    },
  };
}

async function main(): Promise<number> {
  const started = Date.now();
  say(
    `bench/events-embedded: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${loadAvg()}, started ${utc(started)} UTC, run ${RUN_ID}`,
  );
  say(
    `phases ${settings.phases.map((p) => `${p.rate}/s x ${p.seconds} s`).join(', ')}; wait ${settings.waitS} s (baseline ${settings.baselineWaitS} s); ` +
      `at most ${settings.concurrency} injections in flight; LOG_LEVEL=${settings.logLevel}; hard stop ${settings.timeoutS} s`,
  );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-bench-embedded-'));
  const logFile = path.join(os.tmpdir(), `vps-bench-embedded-${RUN_ID}.log`);
  const t = Date.now();
  let nodeArgs: string[] | undefined;
  if (settings.cpuProfile) {
    profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vps-bench-embedded-prof-'));
    nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  }
  service = await startEmbeddedService({ dataDir, logFile, logLevel: settings.logLevel, startTimeoutMs: 180_000, nodeArgs });
  say(
    `vps serve --role all ready in ${((Date.now() - t) / 1000).toFixed(1)} s (pid ${service.pid}, data dir ${dataDir}, gateway ${service.gateway}, sandbox ${service.sandbox})`,
  );

  for (let i = 0; i < settings.endpoints; i++) receivers.push(await startReceiver(`r${i + 1}`, 'service-event'));
  bare = await startReceiver('bare', 'official-push');
  const auth = { authorization: `Bearer ${service.apiKey}` };
  for (const r of receivers) {
    const res = await call<{ code: number }>('POST', `${service.gateway}/v1/webhook-endpoints`, { url: r.url, eventTypes: ['*'] }, auth);
    if (res.status >= 300 || res.json.code !== 0)
      throw new Error(`registering ${r.url} failed: HTTP ${res.status} ${JSON.stringify(res.json)}`);
  }
  stream = await openEventStream(service.gateway, service.apiKey);
  // The service subscribed the emulator at start-up; make sure this is where pushes go now.
  await subscribeComments(service.platformWebhookUrl);

  // Warm-up: the first event starts each endpoint's queue workflow; not counted.
  const warm = await inject('warm', 10, 0.3);
  const warmDeadline = Date.now() + 60_000;
  while (!warm.every((c) => receivers.every((r) => r.arrivals.has(c.text)) && stream!.arrivals.has(c.text)) && Date.now() < warmDeadline)
    await sleep(50);
  const warmLat = warm.flatMap((c) => receivers.map((r) => (r.arrivals.get(c.text) ?? Infinity) - c.due));
  say(
    `warm-up: ${warm.length} comments, push latency p50 / max ${ms(percentile(warmLat, 50))} / ${ms(Math.max(...warmLat))} ms (not counted)`,
  );
  say();

  const results: Array<{ base?: PhaseResult; svc: PhaseResult }> = [];
  for (const p of settings.phases) {
    if (aborted) break;
    let base: PhaseResult | undefined;
    if (settings.baseline) {
      await subscribeComments(bare.url);
      try {
        base = await runPhase('baseline', p.rate, p.seconds);
      } finally {
        await subscribeComments(service.platformWebhookUrl);
      }
      await sleep(1_000);
    }
    if (aborted) break;
    const svc = await runPhase('service', p.rate, p.seconds);
    results.push({ base, svc });
    say();
  }
  const targetPhase = settings.phases.find((p) => p.rate === settings.targetRate);
  if (settings.isolation && targetPhase && !aborted) {
    const bad = await addBadEndpoints(auth);
    try {
      results.push({
        base: results.find((r) => r.svc.rate === targetPhase.rate)?.base,
        svc: await runPhase('service', targetPhase.rate, targetPhase.seconds, true),
      });
    } finally {
      await bad.remove();
    }
    say();
  }

  // ------------------------------------------------------------ summary
  const end = Date.now();
  say(`summary: ${utc(started)} to ${utc(end)} UTC (${((end - started) / 1000).toFixed(0)} s), load average at the end ${loadAvg()}`);
  say(
    "baseline: the emulator's own path, same rate and duration just before each service phase: its COMMENT subscription pointed at a bare loopback receiver (200, no work), injection to receipt there",
  );
  say("latency is counted from each comment's scheduled injection time; a delivery that never arrived within the wait counts as infinite");
  const rows: string[][] = [];
  for (const { base, svc } of results) {
    const bp50 = base ? percentile(base.push, 50) : NaN;
    const bp99 = base ? percentile(base.push, 99) : NaN;
    const judged = svc.rate === settings.targetRate;
    const verdict = (v: number[]) => {
      const met = percentile(v, 50) < TARGET.p50 && percentile(v, 99) < TARGET.p99;
      return `${met ? 'met' : 'MISSED'}${judged ? '' : ' (ref)'}`;
    };
    const beside = svc.isolation ? ', 500 + hang beside' : '';
    rows.push([
      `${svc.rate}/s x ${svc.seconds} s${beside}, push x3`,
      String(svc.injected),
      base ? `${ms(bp50)} / ${ms(bp99)}` : '-',
      pair(svc.push, settings.waitS),
      `${ratio(percentile(svc.push, 50), bp50)} / ${ratio(percentile(svc.push, 99), bp99)}`,
      `${svc.push.length - svc.missingPush}/${svc.push.length}`,
      `< ${TARGET.p50} / < ${TARGET.p99}`,
      verdict(svc.push),
    ]);
    rows.push([
      `${svc.rate}/s x ${svc.seconds} s${beside}, SSE`,
      '',
      base ? `${ms(bp50)} / ${ms(bp99)}` : '-',
      pair(svc.sse, settings.waitS),
      `${ratio(percentile(svc.sse, 50), bp50)} / ${ratio(percentile(svc.sse, 99), bp99)}`,
      `${svc.sse.length - svc.missingSse}/${svc.sse.length}`,
      `< ${TARGET.p50} / < ${TARGET.p99}`,
      verdict(svc.sse),
    ]);
  }
  say(
    table(
      ['phase', 'injected', 'baseline p50 / p99 ms', 'service p50 / p99 ms', 'ratio p50 / p99', 'arrived', 'target ms', 'verdict'],
      rows,
    ),
  );
  const judged = results.filter((r) => r.svc.rate === settings.targetRate);
  const allMet =
    judged.length > 0 &&
    judged.every((r) => [r.svc.push, r.svc.sse].every((v) => percentile(v, 50) < TARGET.p50 && percentile(v, 99) < TARGET.p99));
  say(
    judged.length
      ? `target (ingestion to receipt p50 < ${TARGET.p50} ms, p99 < ${TARGET.p99} ms at ${settings.targetRate}/s, 3 receivers + 1 SSE stream): ${allMet ? 'MET' : 'MISSED'}`
      : `target: not judged (no phase at ${settings.targetRate}/s)`,
  );
  say(
    "issue's figures on main before this work: 5/s push p99 153 ms; 20/s push p99 23.1 s; 100/s x 20 s: 1,021 of 6,000 deliveries within 2 minutes",
  );
  const cpuJudged = judged.map((r) => {
    const p99 = percentile(r.svc.push, 99);
    const met = p99 < CPU_TARGET.p99 && r.svc.cpu.service < CPU_TARGET.cores;
    return { r, p99, met };
  });
  for (const { r, p99, met } of cpuJudged)
    say(
      `issue 33 target 4, ${r.svc.rate}/s${r.svc.isolation ? ' with a failing and a hanging endpoint beside' : ''}: push p99 ${ms(p99, settings.waitS)} ms (< ${CPU_TARGET.p99}), ` +
        `service process ${r.svc.cpu.service.toFixed(2)} cores (< ${CPU_TARGET.cores}): ${met ? 'met' : 'MISSED'}`,
    );
  for (const line of logSummary()) say(line);
  if (settings.cpuProfile) {
    await stopService();
    const exit = service.exited();
    const files = fs.existsSync(profDir) ? fs.readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')) : [];
    if (!exit || files.length === 0) say(`CPU profile: none written (${profDir})`);
    else {
      // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread; others are
      // worker threads (the Temporal SDK runs workflow code in one).
      const byThread = files
        .map((f) => ({ file: path.join(profDir, f), thread: Number(f.split('.')[4]) }))
        .sort((a, b) => a.thread - b.thread);
      const main = readProfile(byThread[0]!.file);
      const others = byThread.slice(1).map((t) => ({ thread: t.thread, profile: readProfile(t.file) }));
      for (const { svc } of results) {
        const w = windowTicks(main, exit.at, svc.startedAt, svc.endedAt);
        const summary = summarizeProfile(main, w.from, w.to);
        say(
          `CPU profile of the service's main thread, service phase ${svc.rate}/s (${(summary.windowMs / 1000).toFixed(1)} s window; ms of samples, self / inclusive; rows overlap):`,
        );
        say(
          table(
            ['category', 'self ms', 'self %', 'inclusive ms', 'inclusive %'],
            summary.rows.map((r) => [
              r.name,
              r.selfMs.toFixed(0),
              ((100 * r.selfMs) / summary.sampledMs).toFixed(1),
              r.inclusiveMs.toFixed(0),
              ((100 * r.inclusiveMs) / summary.sampledMs).toFixed(1),
            ]),
          ),
        );
        say(
          '  top functions by self time: ' +
            summary.topSelf
              .slice(0, 8)
              .map((f) => `${f.name} ${f.selfMs.toFixed(0)} ms`)
              .join('; '),
        );
        for (const o of others) {
          const s2 = summarizeProfile(o.profile, w.from, w.to);
          const idle = s2.rows.find((r) => r.name === '(idle)')?.selfMs ?? 0;
          say(
            `  worker thread ${o.thread}: busy ${s2.sampledMs > 0 ? ((100 * (s2.sampledMs - idle)) / s2.sampledMs).toFixed(1) : '-'} % of ${(s2.sampledMs / 1000).toFixed(1)} s sampled in the window`,
          );
        }
      }
    }
  }
  // Exit 0 once the run completed, met or not (like the other benchmarks); BENCH_STRICT=1 makes a miss exit 1.
  return allMet || process.env.BENCH_STRICT !== '1' ? 0 : 1;
}

const hardStop = setTimeout(() => {
  aborted = true;
  say(`bench/events-embedded: hard stop after ${settings.timeoutS} s (BENCH_TIMEOUT_S)`);
  void cleanup().finally(() => process.exit(2));
}, settings.timeoutS * 1000);
hardStop.unref();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    aborted = true;
    say(`bench/events-embedded: ${signal}, stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}

main().then(
  async (code) => {
    await cleanup();
    process.exit(code);
  },
  async (err: unknown) => {
    console.error('bench/events-embedded failed:', err);
    for (const line of logSummary()) console.error(line);
    await cleanup();
    process.exit(2);
  },
);
