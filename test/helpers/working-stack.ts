/**
 * The stack with the emulator behind it and a worker on its own task queue: what a test of
 * durable work (uploads, publishes) needs, started and stopped in one call each. Seats are bound
 * to fresh emulator accounts with their real token pairs, so every official call is checked.
 */
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import type { RunningWorker } from '../../worker/worker';
import type { SandboxSettings } from '../../sandbox/context';
import { startTestSandbox, type TestSandbox } from './sandbox';
import { emulatorPlatformEnv } from '../../core/upstream/settings';
import { cleanEnv, UNREACHABLE_PLATFORM_ENV } from './processes';
import { requiredEnv, startStack, startStackWorker, type Stack, type Tenant } from './stack';

export interface WorkingStack {
  stack: Stack;
  sb: TestSandbox;
  taskQueue: string;
  /** The current worker (replaced by restartWorker). */
  worker: RunningWorker;
  /** Stops the worker, as a crash or deploy would, and starts a new one on the same queue. */
  restartWorker(pauseMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWorkingStack(
  name: string,
  opts: {
    stack?: Omit<NonNullable<Parameters<typeof startStack>[0]>, 'taskQueue' | 'upstream'>;
    sandbox?: Partial<SandboxSettings>;
    /** The upstream client's timeouts, where a test moves more than small requests (2 s otherwise). */
    upstreamTimeouts?: { connectMs: number; totalMs: number };
    /** The worker's own settings where they differ from core's (e.g. production's address policy). */
    worker?: Partial<Stack['workerSettings']>;
  } = {},
): Promise<WorkingStack> {
  const taskQueue = `vps-${name}-${process.pid}-${Date.now()}`;
  const sb = await startTestSandbox({ settings: opts.sandbox, timeouts: opts.upstreamTimeouts });
  const stack = await startStack({ ratePerMinute: 1_000_000, ...opts.stack, taskQueue, upstream: sb.upstream });
  Object.assign(stack.workerSettings, opts.worker);
  const env: WorkingStack = {
    stack,
    sb,
    taskQueue,
    worker: await startStackWorker(stack, taskQueue, sb.upstream),
    async restartWorker(pauseMs = 500) {
      await env.worker.stop();
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      env.worker = await startStackWorker(stack, taskQueue, sb.upstream);
    },
    async close() {
      await env.worker.stop();
      await stack.close();
      await sb.close();
    },
  };
  return env;
}

export type SandboxAccount = Awaited<ReturnType<TestSandbox['account']>>;

/** A new seat of the tenant, bound to a fresh emulator account with its real tokens. */
export async function bindSandboxSeat(
  env: Pick<WorkingStack, 'stack' | 'sb'>,
  tenant: Tenant,
  platform: 'business' | 'shop',
  opts: { isPrivate?: boolean } = {},
): Promise<{ account: SandboxAccount; seatId: string }> {
  const account = await env.sb.account(platform, opts);
  const { seat } = await env.stack.admin.createSeat({
    customerId: tenant.customerId,
    track: platform === 'shop' ? Track.SHOP : Track.VIDEO,
    name: account.username,
  });
  await env.stack.admin.bindSeat({
    seatId: seat!.id,
    accountId: account.openId,
    accountUsername: account.username,
    credentials: {
      accessToken: account.tokens.access_token,
      refreshToken: account.tokens.refresh_token,
      accessTokenExpiresAt: { seconds: BigInt(account.tokens.access_token_expires_at), nanos: 0 },
    },
  });
  return { account, seatId: seat!.id };
}

/**
 * The environment of a `vps serve --role worker` child on the working stack's queue, database,
 * credentials key, media store and emulator (the test's own settings in `extra`).
 */
export function childWorkerEnv(
  env: Pick<WorkingStack, 'stack' | 'taskQueue'> & { sb?: Pick<TestSandbox, 'url'> },
  extra: Record<string, string>,
): NodeJS.ProcessEnv {
  return cleanEnv({
    DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
    TEMPORAL_ADDRESS: requiredEnv('TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: env.taskQueue,
    VPS_ENCRYPTION_KEY: env.stack.encryptionKey.toString('hex'),
    ...env.stack.mediaEnv,
    // The stack's emulator, or a platform nobody listens on for a test that has none.
    ...(env.sb ? emulatorPlatformEnv(env.sb.url) : UNREACHABLE_PLATFORM_ENV),
    LOG_LEVEL: 'info',
    ...extra,
  });
}
