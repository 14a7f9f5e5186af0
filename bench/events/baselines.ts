/**
 * The two baselines of bench/events, on the run's own Postgres database and loopback receivers:
 * - delivery: a plain loop that signs each event as the service does, POSTs it and inserts one row
 *   per attempt; no queue, no Temporal;
 * - intake: a bare Fastify route that inserts each pushed body into a table and answers.
 * Both use a pool of their own of the same size as the service's (10), so neither side waits on
 * the other's connections.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { Agent, request } from 'undici';
import type { EventRow } from '../../core/db/repositories/events';
import { eventBody } from '../../core/events/present';
import { pushSignature, SIGNATURE_HEADER } from '../../core/events/push-signature';
import { inBatches } from '../harness';
import { BASELINE_APPLICATION } from './probes';
import { EVENT_ID_HEADER } from './receivers';

export const BASELINE_POOL_SIZE = 10;

export interface BaselineTarget {
  url: string;
  signingKey: string;
}

/** Creates the baselines' tables in the run's database; returns the pool they use (the probes' too). */
export async function openBaselineDb(url: string): Promise<postgres.Sql> {
  const sql = postgres(url, { max: BASELINE_POOL_SIZE, onnotice: () => undefined, connection: { application_name: BASELINE_APPLICATION } });
  await sql`create table bench_attempts (id bigserial primary key, event_id text not null, url text not null, status_code int, started_at timestamptz not null, duration_ms int not null)`;
  await sql`create table bench_intake (id bigserial primary key, received_at timestamptz not null default now(), body jsonb not null)`;
  return sql;
}

/**
 * Delivers every event to every target from `concurrency` loops; resolves with the seconds taken.
 * Fails on any answer but 200: the receivers are the same healthy ones the service pushes to.
 */
export async function plainDeliveryLoop(
  sql: postgres.Sql,
  events: readonly EventRow[],
  targets: readonly BaselineTarget[],
  concurrency: number,
): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const jobs = events.flatMap((event) => targets.map((target) => ({ event, target })));
  const started = Date.now();
  try {
    await inBatches(jobs, concurrency, ({ event, target }) => deliverPlainly(sql, agent, event, target));
  } finally {
    await agent.close();
  }
  return (Date.now() - started) / 1000;
}

/**
 * The same plain delivery at a steady rate: `rate` events a second for `seconds`, each delivered to
 * every target as it is due (open loop, as the service's steady phase is driven), the events taken
 * in turn from `events`. What a delivery costs when nothing is batched by a backlog: the baseline of
 * the steady phases' CPU per delivery.
 */
export async function plainDeliveryAtRate(
  sql: postgres.Sql,
  events: readonly EventRow[],
  targets: readonly BaselineTarget[],
  rate: number,
  seconds: number,
): Promise<void> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const start = Date.now() + 100;
  const inFlight: Array<Promise<void>> = [];
  try {
    for (let i = 0; i < rate * seconds; i++) {
      const wait = start + (i * 1000) / rate - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const event = events[i % events.length]!;
      for (const target of targets) inFlight.push(deliverPlainly(sql, agent, event, target));
    }
    await Promise.all(inFlight);
  } finally {
    await agent.close();
  }
}

/** Signs, POSTs and records one attempt; fails on any answer but 200 (the receivers are healthy). */
async function deliverPlainly(sql: postgres.Sql, agent: Agent, event: EventRow, target: BaselineTarget): Promise<void> {
  const body = JSON.stringify(eventBody(event));
  const startedAt = new Date();
  const res = await request(target.url, {
    method: 'POST',
    dispatcher: agent,
    headers: {
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: pushSignature([target.signingKey], Math.floor(Date.now() / 1000), body),
      [EVENT_ID_HEADER]: event.id,
    },
    body,
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`baseline delivery answered HTTP ${res.statusCode}`);
  await sql`insert into bench_attempts (event_id, url, status_code, started_at, duration_ms) values (${event.id}, ${target.url}, ${res.statusCode}, ${startedAt}, ${Date.now() - startedAt.getTime()})`;
}

/** The intake baseline: POST /bare stores the body it was sent with one insert. */
export async function startBareIntake(sql: postgres.Sql): Promise<{ url: string; app: FastifyInstance }> {
  const app = Fastify({ logger: false });
  app.post('/bare', async (req) => {
    const [row] = await sql<
      { id: string }[]
    >`insert into bench_intake (body) values (${sql.json(req.body as postgres.JSONValue)}) returning id`;
    return { code: 0, message: 'ok', data: { outcome: 'stored', eventId: row!.id } };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/bare`, app };
}
