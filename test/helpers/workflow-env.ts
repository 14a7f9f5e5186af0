/**
 * What a workflow test needs beside the dev server the global setup started: the workflow bundle,
 * built once per file, a worker connection and a client. Each test then runs its own worker on a
 * task queue of its own (worker.runUntil).
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

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
  const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  return {
    bundle,
    nativeConnection,
    client: new Client({ connection }),
    async close() {
      await connection.close();
      await nativeConnection.close();
    },
  };
}
