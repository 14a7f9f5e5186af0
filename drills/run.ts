/**
 * `npm run drills`: failure drills against the multi-process topology (drills/topology.ts) under a
 * steady, bounded load of publishes (through both gateways, alternating) and platform events
 * (comments and direct messages the emulator pushes as official webhooks). One drill after
 * another: kill a worker, kill a gateway, restart Postgres, restart Temporal, make the emulator
 * answer 5xx and then hang, make a webhook receiver fail. After each, once the work has settled
 * (bounded wait), it checks that nothing was lost or sent twice upstream, and prints a table.
 * Exits non-zero if anything was lost, late or duplicated. Everything runs on 127.0.0.1.
 *
 *   npm run drills                      all drills
 *   npm run drills -- kill-worker ...   only the named ones
 *   DRILLS_QUIESCE_MS=150000            wait longer for quiescence (default 60 s)
 *   DRILLS_KEEP=1                       keep the topology's folder (logs, Postgres data, Temporal SQLite)
 */
import { describeTopology, PROCESS_NAMES, startTopology, type SeatHandle, type TenantHandle, type Topology } from './topology';
import {
  audit,
  classifyUndelivered,
  createEndpoint,
  emitPlatformEvent,
  EventLogReader,
  isSettled,
  publishOnce,
  Receiver,
  SseFollower,
  upstreamPostsByCaption,
  type Audit,
  type EmittedEvent,
  type PublishAttempt,
} from './traffic';

/** The load: one publish every PUBLISH_EVERY_MS and EVENTS_PER_SECOND platform events, bounded in count. */
const PUBLISH_EVERY_MS = 1_000;
/** Comments and messages a second, paced, as a busy account's traffic (DRILLS_EVENT_RATE). */
const EVENTS_PER_SECOND = Number(process.env.DRILLS_EVENT_RATE ?? 100);
const MAX_PUBLISHES_PER_DRILL = 40;
/**
 * How long a publish's client keeps trying (15 s a try) with its Idempotency-Key, as an
 * integrator's client does. While a worker restarts, this 2-core machine runs out of CPU, and an
 * answer can take longer than one try's 15 s (measured up to 40 s between gateway and core: the
 * docs/open-work.md); the drill reports the slowest answer rather than calling it lost.
 */
const PUBLISH_DEADLINE_MS = 60_000;
const MAX_EVENTS_PER_DRILL = 3_000;
/** Emulator calls in flight at once; a slower emulator lowers the rate rather than queueing calls. */
const MAX_EMITS_IN_FLIGHT = 50;
/** Load before the fault, and after its end. */
const WARMUP_MS = 3_000;
const AFTER_MS = 3_000;
/**
 * Bounded wait for quiescence, from the end of the fault. A drain whose worker was killed moves to
 * another worker after its heartbeat timeout (10 s), and the rows it had claimed follow once their
 * leases lapse (the attempt timeout plus 15 s); a push still pending at the deadline is reported
 * as late, not lost.
 */
const QUIESCE_MS = Number(process.env.DRILLS_QUIESCE_MS ?? 60_000);
/** The whole run stops by itself after this long, whatever happens. */
const RUN_BUDGET_MS = 11 * 60_000;
/** Drills are not started once this much of the budget is spent. */
const START_BUDGET_MS = 9 * 60_000;

const RECOVERY_DEFINITION = [
  'recovery ms: from the end of the fault (the killed process back and ready, Postgres or Temporal accepting',
  '  again, the fault window closed) until the first check, polled every 500 ms, in which everything issued',
  '  before that moment is caught up: each publish answered and, if accepted, settled (terminal status, and',
  '  the post id for a completed post); each platform event in the log, pushed to every endpoint and received',
  '  by every stream. It includes the ordinary latency of the work issued just before the fault ended.',
  'first ok ms: from the end of the fault until the first publish sent after it was accepted by a gateway.',
  'lost: accepted publishes with no record, settled publishes without their status event, completed publishes',
  '  with no post upstream, publishes done whose answer never reached the client (every retry with the same',
  '  Idempotency-Key refused), platform events missing from the log, (endpoint, event) pairs never answered 2xx,',
  '  and (stream, event) pairs a stream never received (every event after where it started), all counted',
  `  after the bounded wait for quiescence (${QUIESCE_MS / 1000} s from the end of the fault).`,
  'late: work still under way at that deadline: a push whose delivery is pending (to be tried again), a',
  '  publish not yet terminal (its workflow still running). Not lost, but not done in time: the run fails.',
  'dup upstream: posts beyond the first with the same caption on the account (each publish has its own).',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const runStarted = Date.now();
const stamp = () => `[${((Date.now() - runStarted) / 1000).toFixed(1).padStart(6)} s]`;
const say = (line: string) => process.stderr.write(`${stamp()} ${line}\n`);

interface FaultWindow {
  /** When the fault began and ended (ms since epoch). */
  start: number;
  end: number;
  note?: string;
}

interface Drill {
  name: string;
  what: string;
  /** Bounded wait for quiescence after the load stops. */
  quiesceMs: number;
  fault(t: Topology, ctx: DrillContext): Promise<FaultWindow>;
}

interface DrillContext {
  receivers: Receiver[];
}

const DRILLS: Drill[] = [
  {
    name: 'kill-worker',
    what: 'SIGKILL worker 1, down 3 s, start it again',
    quiesceMs: QUIESCE_MS,
    async fault(t) {
      const start = Date.now();
      await t.restart('worker1', { signal: 'SIGKILL', downMs: 3_000 });
      return { start, end: Date.now() };
    },
  },
  {
    name: 'kill-gateway',
    what: 'SIGKILL gateway 1, down 3 s, start it again',
    quiesceMs: QUIESCE_MS,
    async fault(t) {
      const start = Date.now();
      await t.restart('gateway1', { signal: 'SIGKILL', downMs: 3_000 });
      return { start, end: Date.now() };
    },
  },
  {
    name: 'restart-postgres',
    what: 'Postgres stopped as in a crash (immediate), down 3 s, started again',
    quiesceMs: QUIESCE_MS,
    async fault(t) {
      const start = Date.now();
      await t.restartPostgres({ mode: 'immediate', downMs: 3_000 });
      return { start, end: Date.now() };
    },
  },
  {
    name: 'restart-temporal',
    what: 'Temporal dev server stopped (SIGTERM), down 3 s, started again on its SQLite file',
    quiesceMs: QUIESCE_MS,
    async fault(t) {
      const start = Date.now();
      await t.restartTemporal({ downMs: 3_000 });
      return { start, end: Date.now() };
    },
  },
  {
    name: 'emulator-5xx-hang',
    what: 'every official call answers 5xx for 4 s, then hangs 5 s (then does the work) for 5 s',
    quiesceMs: QUIESCE_MS,
    async fault(t) {
      const start = Date.now();
      await t.sandbox('POST', '/_sandbox/faults', { kind: 'server_error', count: 100_000, platform: 'business' });
      await sleep(4_000);
      await t.sandbox('DELETE', '/_sandbox/faults');
      await t.sandbox('POST', '/_sandbox/faults', { kind: 'hang', count: 100_000, platform: 'business', hangMs: 5_000 });
      await sleep(5_000);
      await t.sandbox('DELETE', '/_sandbox/faults');
      return { start, end: Date.now() };
    },
  },
  {
    name: 'receiver-fails',
    what: 'webhook receiver A answers 500 for 8 s',
    quiesceMs: QUIESCE_MS,
    async fault(_t, ctx) {
      const start = Date.now();
      ctx.receivers[0]!.failing = true;
      await sleep(8_000);
      ctx.receivers[0]!.failing = false;
      return { start, end: Date.now() };
    },
  },
];

interface DrillResult {
  name: string;
  publishes: number;
  accepted: number;
  refused: number;
  events: number;
  lost: number;
  /** Work still pending at the deadline (deliveries being retried, publishes not yet terminal): not lost, not done in time. */
  late: number;
  duplicatedUpstream: number;
  recoveryMs: number | null;
  firstOkMs: number | null;
  faultMs: number;
  durationMs: number;
  details: string[];
  error?: string;
}

/** Everything issued before `end` is accounted for (see RECOVERY_DEFINITION). */
function caughtUp(
  a: Audit,
  end: number,
  publishes: PublishAttempt[],
  emitted: EmittedEvent[],
  receivers: Receiver[],
  followers: SseFollower[],
): boolean {
  const records = new Map(a.records.map((r) => [r.id, r]));
  for (const p of publishes) {
    if (p.startedAt >= end) continue;
    if (p.endedAt === undefined) return false;
    if (p.recordId) {
      const r = records.get(p.recordId);
      if (!r || !isSettled(r)) return false;
    }
  }
  const logged = new Map<string, string>();
  for (const e of a.events) {
    const id = e.type === 'vplat.comment.created' ? e.data.comment_id : e.type === 'vplat.message.received' ? e.data.message_id : undefined;
    if (id !== undefined) logged.set(String(id), e.id);
  }
  for (const x of emitted) {
    if (x.at >= end) continue;
    const eventId = logged.get(x.officialId);
    if (!eventId) return false;
    if (receivers.some((r) => !r.delivered.has(eventId))) return false;
    if (followers.some((f) => !f.has(eventId))) return false;
  }
  return true;
}

async function runDrill(t: Topology, drill: Drill, index: number): Promise<DrillResult> {
  const began = Date.now();
  const result = emptyResult(drill.name);
  const gateways = t.urls.gateways;
  const tenant: TenantHandle = await t.createTenant({ name: `Drill ${drill.name}` });
  const seats: SeatHandle[] = [await t.bindVideoSeat(tenant), await t.bindVideoSeat(tenant)];
  const receivers = [new Receiver('endpoint A'), new Receiver('endpoint B')];
  for (const r of receivers) {
    await r.start();
    r.endpointId = await createEndpoint(gateways[0], tenant.apiKey, r.url);
  }
  const followers = [
    new SseFollower('stream 1', () => gateways, tenant.apiKey, 0),
    new SseFollower('stream 2', () => gateways, tenant.apiKey, 1),
  ];
  await Promise.all(followers.map((f) => f.start()));
  const exitsBefore = t.unexpectedExits.length;

  const publishes: PublishAttempt[] = [];
  const pending: Array<Promise<unknown>> = [];
  const emitted: EmittedEvent[] = [];
  const emitErrors: string[] = [];
  let loadOn = true;
  const publisher = (async () => {
    for (let i = 0; loadOn && i < MAX_PUBLISHES_PER_DRILL; i++) {
      const caption = `drill ${index} ${drill.name} #${i} ${Date.now().toString(36)}`;
      // Not awaited: a publish held up by the fault must not slow the steady pace of the others.
      const p = publishOnce(gateways, i, tenant.apiKey, seats[i % 2]!, t.urls.media, caption, {
        tries: 10,
        deadlineMs: PUBLISH_DEADLINE_MS,
      }).then((attempt) => {
        publishes.push(attempt);
      });
      pending.push(p);
      await sleep(PUBLISH_EVERY_MS);
    }
  })();
  const emitter = (async () => {
    // Paced by the clock, not by each call's answer, so the rate holds while the service is slow.
    const inFlight = new Set<Promise<void>>();
    const startedAt = Date.now();
    for (let i = 0; loadOn && i < MAX_EVENTS_PER_DRILL; i++) {
      const kind = i % 2 === 0 ? 'message' : 'comment';
      const emit: Promise<void> = emitPlatformEvent(t, seats[Math.floor(i / 2) % 2]!, kind, `drill ${drill.name} ${kind} ${i}`)
        .then((e) => void emitted.push(e))
        .catch((err: unknown) => void emitErrors.push((err as Error).message))
        .finally(() => inFlight.delete(emit));
      inFlight.add(emit);
      if (inFlight.size >= MAX_EMITS_IN_FLIGHT) await Promise.race(inFlight);
      const due = startedAt + ((i + 1) * 1_000) / EVENTS_PER_SECOND;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    await Promise.all(inFlight);
  })();

  try {
    await sleep(WARMUP_MS);
    say(`${drill.name}: fault: ${drill.what}`);
    const window = await drill.fault(t, { receivers });
    result.faultMs = window.end - window.start;
    say(`${drill.name}: fault over after ${result.faultMs} ms; measuring recovery`);

    // Recovery: poll the audit from the end of the fault while the load goes on.
    const recovery = (async () => {
      const deadline = window.end + drill.quiesceMs;
      const eventLog = new EventLogReader(tenant.apiKey);
      while (Date.now() < deadline) {
        try {
          const a = await audit({ gateway: gateways[1], tenant, publishes, emitted, receivers, followers, eventLog });
          if (caughtUp(a, window.end, publishes, emitted, receivers, followers)) return Date.now() - window.end;
        } catch {
          // A read refused while the service recovers: the next poll tries again.
        }
        await sleep(500);
      }
      return null;
    })();
    await sleep(AFTER_MS);
    loadOn = false;
    await Promise.all([publisher, emitter]);
    await Promise.all(pending);
    result.recoveryMs = await recovery;
    const firstOk = publishes.filter((p) => p.startedAt >= window.end && p.recordId).sort((a, b) => a.endedAt! - b.endedAt!)[0];
    result.firstOkMs = firstOk ? firstOk.endedAt! - window.end : null;

    // Quiescence: everything the load did is accounted for, or the bounded wait is over.
    let final: Audit | undefined;
    // The same deadline as the recovery's: one bounded wait per drill.
    const deadline = window.end + drill.quiesceMs;
    for (;;) {
      try {
        final = await audit({ gateway: gateways[0], tenant, publishes, emitted, receivers, followers });
        if (final.ok) break;
      } catch (err) {
        const line = `audit: ${(err as Error).message}`;
        if (!result.details.includes(line)) say(`${drill.name}: ${line}`);
        result.details.push(line);
      }
      if (Date.now() > deadline) break;
      await sleep(1_000);
    }
    if (!final) throw new Error('the service never answered the audit');

    // Upstream: posts by caption on both accounts (after the faults are cleared).
    const posts = await upstreamPostsByCaption(t, seats);
    const captionOf = new Map(publishes.filter((p) => p.recordId).map((p) => [p.recordId!, p.caption]));
    let duplicated = 0;
    let lostUpstream = 0;
    for (const p of publishes) {
      const n = posts.get(p.caption) ?? 0;
      if (n > 1) {
        duplicated += n - 1;
        result.details.push(`posted ${n} times upstream: "${p.caption}" (record ${p.recordId ?? 'none: no gateway accepted it'})`);
      }
    }
    for (const r of final.records) {
      const caption = captionOf.get(r.id);
      if (r.status === 'publish_complete' && caption !== undefined && (posts.get(caption) ?? 0) === 0) {
        lostUpstream += 1;
        result.details.push(`record ${r.id} is publish_complete but no post "${caption}" exists upstream`);
      }
    }
    // A publish no gateway accepted must not have been posted either (its answer was lost, its record too).
    // The service did the work but every try with the publish's Idempotency-Key was refused: the
    // client cannot learn the outcome, and one that gives up and publishes again posts twice.
    const unknownRecords = final.records.filter((r) => !captionOf.has(r.id));
    if (unknownRecords.length > 0)
      result.details.push(
        `answer lost: ${unknownRecords.length} publish(es) done by the service while every try with their Idempotency-Key was refused: ${unknownRecords.map((r) => `${r.id} ${r.status}`).join(', ')}`,
      );

    result.publishes = publishes.length;
    result.accepted = final.acceptedPublishes;
    result.refused = publishes.filter((p) => !p.recordId).length;
    result.events = final.events.length;
    result.duplicatedUpstream = duplicated;
    const pushes = await classifyUndelivered(gateways[0], tenant.apiKey, final.undelivered);
    // A publish still running is late (its workflow ends it, at worst unconfirmed); an
    // accepted publish with no record at all is lost.
    const noRecord = final.unsettledPublishes.filter((u) => u.includes('no record'));
    const running = final.unsettledPublishes.filter((u) => !u.includes('no record'));
    result.late = pushes.late.length + running.length;
    result.lost =
      noRecord.length +
      final.missingStatusEvents.length +
      final.missingEvents.length +
      pushes.lost.length +
      final.sseGaps.length +
      lostUpstream +
      unknownRecords.length;
    const byStatus = new Map<string, number>();
    for (const r of final.records) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    result.details.push(`publish records by status: ${[...byStatus].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    const answered = publishes
      .filter((p) => p.recordId)
      .map((p) => p.endedAt! - p.startedAt)
      .sort((a, b) => a - b);
    if (answered.length > 0) {
      const retried = publishes.filter((p) => p.recordId && p.tries > 1).length;
      result.details.push(
        `publish answers: median ${answered[Math.floor(answered.length / 2)]} ms, slowest ${answered[answered.length - 1]} ms, ${retried} needed more than one try`,
      );
    }
    const list = (label: string, items: string[]) => {
      if (items.length > 0)
        result.details.push(`${label} (${items.length}): ${items.slice(0, 5).join(', ')}${items.length > 5 ? ', …' : ''}`);
    };
    list('accepted publishes with no record', noRecord);
    list('publishes not settled at the deadline (late)', running);
    list('status events missing', final.missingStatusEvents);
    list('platform events missing from the log', final.missingEvents);
    list('platform events logged twice', final.duplicateEvents);
    list('pushes lost (no delivery left to try)', pushes.lost);
    list('pushes late (delivery still pending at the deadline)', pushes.late);
    list('stream gaps', final.sseGaps);
    list('stream duplicates', final.sseDuplicates);
    list('emulator control errors', emitErrors);
    // Every try, so a refusal can be told apart from a service that never answered in time.
    const refusals = publishes.filter((p) => !p.recordId).map((p) => `[${p.failures.join('; ') || '?'}]`);
    list('publishes no gateway accepted', refusals);
    const endpointRepeats = receivers.map((r) => [...r.delivered.values()].filter((n) => n > 1).length);
    if (endpointRepeats.some((n) => n > 0))
      result.details.push(
        `events pushed more than once (at-least-once, deduplicated by id): ${receivers.map((r, i) => `${r.name} ${endpointRepeats[i]}`).join(', ')}`,
      );
    const ats = emitted.map((e) => e.at);
    const emitSeconds = ats.length > 1 ? (Math.max(...ats) - Math.min(...ats)) / 1000 : 0;
    result.details.push(
      `platform events emitted: ${emitted.length}${emitSeconds > 0 ? ` at ${(emitted.length / emitSeconds).toFixed(0)}/s` : ''}`,
    );
    result.details.push(
      `streams: ${followers.map((f) => `${f.name} ${f.received.length} events, ${f.connects} connections, ${f.resumes} resumed with Last-Event-ID`).join('; ')}`,
    );
    for (const exit of t.unexpectedExits.slice(exitsBefore)) {
      result.details.push(
        `UNEXPECTED EXIT of ${exit.name} (code ${exit.code}, signal ${exit.signal}), restarted by the supervisor; last output: ${exit.tail.trim().split('\n').slice(-3).join(' | ')}`,
      );
    }
  } finally {
    loadOn = false;
    await Promise.allSettled([publisher, emitter, ...pending]);
    await Promise.all(followers.map((f) => f.stop()));
    await Promise.all(receivers.map((r) => r.close()));
    await t.sandbox('DELETE', '/_sandbox/faults').catch(() => undefined);
    result.durationMs = Date.now() - began;
  }
  return result;
}

/** Every process up and a round trip through Temporal and a worker, before the next drill. */
async function waitHealthy(t: Topology, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const down = PROCESS_NAMES.filter((n) => !t.processes[n].alive);
    if (down.length === 0) {
      try {
        await t.admin.pingWorker({}, { timeoutMs: 10_000 });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`no worker round trip: ${(err as Error).message}`);
      }
    } else if (Date.now() > deadline) {
      throw new Error(`processes down: ${down.join(', ')}`);
    }
    await sleep(500);
  }
}

function table(results: DrillResult[]): string {
  const head = [
    'drill',
    'requests',
    'accepted',
    'events',
    'lost',
    'late',
    'dup upstream',
    'fault ms',
    'recovery ms',
    'first ok ms',
    'drill s',
  ];
  const rows = results.map((r) => [
    r.name,
    String(r.publishes),
    String(r.accepted),
    String(r.events),
    r.error ? 'ERROR' : String(r.lost),
    String(r.late),
    String(r.duplicatedUpstream),
    String(r.faultMs),
    r.recoveryMs === null ? `>${QUIESCE_MS}` : String(r.recoveryMs),
    r.firstOkMs === null ? '-' : String(r.firstOkMs),
    (r.durationMs / 1000).toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = only.filter((n) => !DRILLS.some((d) => d.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown drill(s): ${unknown.join(', ')}; known: ${DRILLS.map((d) => d.name).join(', ')}\n`);
    return 2;
  }
  const drills = only.length > 0 ? DRILLS.filter((d) => only.includes(d.name)) : DRILLS;
  say('starting the topology');
  // The drills' own polling must never meet the rate limit; it has its own test.
  const topology = await startTopology({ rateLimitPerMinute: 1_000_000, keepDir: process.env.DRILLS_KEEP === '1', log: say });
  const results: DrillResult[] = [];
  try {
    say(describeTopology(topology).replace(/\n/g, '\n        '));
    for (const [i, drill] of drills.entries()) {
      if (Date.now() - runStarted > START_BUDGET_MS) {
        say(`${drill.name}: skipped, the run's time budget is spent`);
        results.push({ ...emptyResult(drill.name), error: 'skipped: time budget spent' });
        continue;
      }
      try {
        await waitHealthy(topology, 60_000);
        say(`${drill.name}: load on`);
        const r = await runDrill(topology, drill, i);
        results.push(r);
        say(
          `${drill.name}: ${r.publishes} publishes (${r.accepted} accepted), ${r.events} events, lost ${r.lost}, late ${r.late}, duplicated upstream ${r.duplicatedUpstream}, recovery ${r.recoveryMs ?? 'never'} ms`,
        );
      } catch (err) {
        say(`${drill.name}: failed: ${(err as Error).stack ?? String(err)}`);
        results.push({ ...emptyResult(drill.name), error: (err as Error).message });
      }
    }
  } finally {
    say('stopping the topology');
    await topology.close();
  }

  const out: string[] = ['', table(results), '', ...RECOVERY_DEFINITION, ''];
  for (const r of results) {
    if (r.error) out.push(`${r.name}: ERROR ${r.error}`);
    for (const d of r.details) out.push(`${r.name}: ${d}`);
  }
  out.push('', `total ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
  // Late work fails the run too: "every accepted publish reaches a terminal status" is a bounded promise.
  const bad = results.some((r) => r.error || r.lost > 0 || r.late > 0 || r.duplicatedUpstream > 0);
  return bad ? 1 : 0;
}

function emptyResult(name: string): DrillResult {
  return {
    name,
    publishes: 0,
    accepted: 0,
    refused: 0,
    events: 0,
    lost: 0,
    late: 0,
    duplicatedUpstream: 0,
    recoveryMs: null,
    firstOkMs: null,
    faultMs: 0,
    durationMs: 0,
    details: [],
  };
}

// The run stops by itself, whatever hangs.
setTimeout(() => {
  process.stderr.write(`drills: still running after ${RUN_BUDGET_MS / 60_000} minutes; giving up\n`);
  process.exit(3);
}, RUN_BUDGET_MS).unref();

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`drills: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
