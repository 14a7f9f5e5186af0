/**
 * Every history saved in histories/ replays against the workflows as the worker bundles them today
 * (worker/workflow-bundle.ts: the workflows and their interceptors), so a change that would break
 * the runs still open in a deployment fails here, naming the history it breaks. Every registered
 * workflow has at least one saved history, and a control proves the replay does fail: a history
 * changed as a code change would change it is refused. No server: replay reads only the files.
 * How to record a history, and why old ones must keep replaying: README.md in this folder.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  Worker,
  type InjectedSinks,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { WORKER_WORKFLOWS } from '../../worker/workflow-bundle';
import * as registered from '../../workflows';
import type { OutcomeSinks } from '../../workflows/interceptors';
import { HISTORIES_DIR, readHistoryFile } from '../helpers/workflow-env';

type History = ReturnType<typeof readHistoryFile>;

const files = readdirSync(HISTORIES_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();
const histories = files.map((file) => ({ file, history: readHistoryFile(path.join(HISTORIES_DIR, file)) }));

const startOf = (history: History) => history.events![0]!.workflowExecutionStartedEventAttributes!;

describe('saved workflow histories', () => {
  let workflowBundle: WorkflowBundleWithSourceMap;
  beforeAll(async () => {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    workflowBundle = await bundleWorkflowCode({
      workflowsPath: WORKER_WORKFLOWS.workflowsPath,
      workflowInterceptorModules: WORKER_WORKFLOWS.interceptorModules,
      logger: quiet,
    });
  }, 120_000);

  /** Replays `items` in one replay worker; returns, per item, its name and the error its replay ended with, if any. */
  async function replay(items: { name: string; history: History }[]): Promise<{ name: string; error?: Error }[]> {
    // The interceptors report each run's end through this sink; a replay calls it for nothing.
    const sinks: InjectedSinks<OutcomeSinks> = { outcomes: { ended: { fn() {} } } };
    const results: { name: string; error?: Error }[] = [];
    const replayed = Worker.runReplayHistories(
      { workflowBundle, sinks },
      items.map(({ name, history }) => ({ workflowId: startOf(history).workflowId || name, history })),
    );
    // One at a time, in the order given.
    for await (const { error } of replayed) results.push({ name: items[results.length]!.name, ...(error ? { error } : {}) });
    return results;
  }

  it('has a history of every workflow the worker registers', () => {
    const recorded = new Set(histories.map(({ history }) => startOf(history).workflowType?.name));
    const missing = Object.keys(registered).filter((name) => !recorded.has(name));
    expect(missing).toEqual([]);
  });

  it('replays every saved history against the current workflows', async () => {
    const results = await replay(histories.map(({ file, history }) => ({ name: file, history })));
    expect(results.map((r) => r.name)).toEqual(files);
    const broken = results.filter((r) => r.error).map((r) => `${r.name}: ${r.error!.name}: ${r.error!.message}`);
    expect(broken).toEqual([]);
  }, 60_000);

  it('refuses a history the current code would not have made (the control)', async () => {
    // As if the code now called another activity where the history shows this one.
    const source = histories.find(({ history }) => history.events!.some((e) => e.activityTaskScheduledEventAttributes))!;
    const changed = structuredClone(source.history);
    const scheduled = changed.events!.find((e) => e.activityTaskScheduledEventAttributes)!.activityTaskScheduledEventAttributes!;
    scheduled.activityType = { name: `${scheduled.activityType!.name}Renamed` };
    const [result] = await replay([{ name: `${source.file} (activity renamed)`, history: changed }]);
    expect(result!.error).toBeInstanceOf(DeterminismViolationError);
  }, 60_000);
});
