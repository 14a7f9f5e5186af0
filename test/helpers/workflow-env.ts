/**
 * What a workflow test needs beside the dev server the global setup started: the workflow bundle,
 * built once per file, a worker connection and a client. Each test then runs its own worker on a
 * task queue of its own (worker.runUntil), and checks the history its workflow left: replayed
 * against the bundle at once, and, with RECORD_WORKFLOW_HISTORIES=1, saved under
 * test/workflows/histories/ for replay.test.ts (test/workflows/README.md).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** Where saved histories live; replay.test.ts replays every JSON file in it. */
export const HISTORIES_DIR = path.join(__dirname, '..', 'workflows', 'histories');
/** A saved history is committed: one larger than this was recorded from the wrong run (a loop, a continue-as-new chain). */
export const MAX_SAVED_HISTORY_BYTES = 24 * 1024;
/** The identities a saved history shows in place of the machine's pid@hostname. */
const CLIENT_IDENTITY = 'workflow-tests';
const WORKER_IDENTITY = 'workflow-tests-worker';

type History = proto.temporal.api.history.v1.IHistory;

/**
 * History ⇄ the JSON of Temporal's own history files (`temporal workflow show --output json`, the
 * UI's download), so a history taken from a running deployment can be saved here as well. Not
 * through @temporalio/common's historyToJSON/historyFromJSON (which Worker.runReplayHistory uses
 * for JSON input): with protobufjs 7 hoisted for grpc, each @temporalio package has its own copy of
 * protobufjs 8, and common's copy rejects the types of proto's ("type must be a Type"). The
 * protojson of the copy @temporalio/proto was built with reads and writes its types.
 */
const protojson = require(require.resolve('protobufjs/ext/protojson', { paths: [path.dirname(require.resolve('@temporalio/proto'))] })) as {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): History | null;
};
const historyType = patchProtobufRoot(proto as unknown as Record<string, unknown> & { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

/** A history as a saved file's text: Temporal's JSON, one event a line (a re-recording diffs by event). */
export function historyFileText(history: History): string {
  const { events } = protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)) as { events: unknown[] };
  return `{"events": [\n${events.map((event) => `  ${JSON.stringify(event)}`).join(',\n')}\n]}\n`;
}

/** A saved history file, as the History Worker.runReplayHistories takes. */
export function readHistoryFile(file: string): History {
  const history = protojson.fromJson(historyType, JSON.parse(readFileSync(file, 'utf8')), { ignoreUnknownFields: true });
  if (!history?.events?.length) throw new Error(`${file} holds no history events`);
  return history;
}

export interface WorkflowTestEnv {
  bundle: WorkflowBundleWithSourceMap;
  nativeConnection: NativeConnection;
  client: Client;
  close(): Promise<void>;
}

export async function startWorkflowTestEnv(): Promise<WorkflowTestEnv> {
  const address = process.env.TEMPORAL_ADDRESS!;
  // The worker's state changes are noise here; failures still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  return {
    bundle,
    nativeConnection,
    client: new Client({ connection, identity: CLIENT_IDENTITY }),
    async close() {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/**
 * The environment of a describe block's workflow tests: started before its tests and closed after
 * them. What it returns reads the started environment, so tests use it as they would the real one.
 */
export function useWorkflowTestEnv(): WorkflowTestEnv {
  let started: WorkflowTestEnv | undefined;
  beforeAll(async () => {
    started = await startWorkflowTestEnv();
  }, 120_000);
  afterAll(async () => {
    await started?.close();
  });
  const current = (): WorkflowTestEnv => {
    if (!started) throw new Error('the workflow test environment has not started');
    return started;
  };
  return {
    get bundle() {
      return current().bundle;
    },
    get nativeConnection() {
      return current().nativeConnection;
    },
    get client() {
      return current().client;
    },
    close: () => current().close(),
  };
}

/** A worker of the test's own, on a fresh task queue named after `prefix`, running `activities` (stubs). */
export async function createTestWorker(
  env: WorkflowTestEnv,
  prefix: string,
  activities: object,
): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = `${prefix}-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    identity: WORKER_IDENTITY,
    workflowBundle: env.bundle,
    activities,
  });
  return { worker, taskQueue };
}

/**
 * Replays the history of a test's workflow (the latest run, or `runId`'s) against the bundle, so the
 * test fails on a nondeterminism of its own making. With RECORD_WORKFLOW_HISTORIES=1 and a name
 * (`<workflow>-<case>`), also saves the history as histories/<name>.json, one event a line.
 */
export async function checkHistory(
  env: WorkflowTestEnv,
  workflowId: string,
  opts: { saveAs?: string; runId?: string } = {},
): Promise<void> {
  const history = await env.client.workflow.getHandle(workflowId, opts.runId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: env.bundle }, history, workflowId);
  if (!opts.saveAs || process.env.RECORD_WORKFLOW_HISTORIES !== '1') return;
  const text = historyFileText(history);
  if (Buffer.byteLength(text) > MAX_SAVED_HISTORY_BYTES) {
    throw new Error(
      `history ${opts.saveAs} is ${Buffer.byteLength(text)} bytes (${history.events?.length} events): too large to commit; record a shorter run`,
    );
  }
  mkdirSync(HISTORIES_DIR, { recursive: true });
  const file = path.join(HISTORIES_DIR, `${opts.saveAs}.json`);
  writeFileSync(file, text);
  // What replay.test.ts will read: the file, not the history it was written from.
  await Worker.runReplayHistory({ workflowBundle: env.bundle }, readHistoryFile(file), workflowId);
}
