/**
 * bench/publish: N video publishes, CONCURRENCY at a time, against the sandbox emulator set to
 * complete almost at once (1 ms of processing, post id 1 ms later), measured in one run:
 *   - the service path: POST /v1/vplat/v1.3/business/video/publish through the gateway (core in
 *     process, as `--role all`), followed by the publish workflow on a real worker to
 *     publish_complete with its post id;
 *   - the baseline: the same publishes sent straight to the emulator's official API from a loop,
 *     polling the official status at the interval the service polls at, until PUBLISH_COMPLETE
 *     with post_ids.
 * Prints publishes per second to completion and the ratio, request-to-complete p50/p99 of both,
 * the service's overhead over the baseline, how many official submits the service made, and where
 * the service's time goes, read from the workflow histories.
 *
 *   npm run bench:publish   (BENCH_PUBLISHES=100, BENCH_CONCURRENCY=10, BENCH_WARMUP=10,
 *                            BENCH_POLL_MS=100)
 * Needs Postgres on 127.0.0.1:5432 and the Temporal CLI (scripts/temporal-cli.sh).
 */
import type { WorkflowHandle } from '@temporalio/client';
import { request } from 'undici';
import * as records from '../../core/db/repositories/publish-records';
import { createLogger } from '../../core/logger';
import { isTerminal } from '../../core/publishing/status';
import type { PublishSettings } from '../../core/services/publish.service';
import type { PublishStatus } from '../../core/db/schema';
import { workflowIds } from '../../workflows/workflow-ids';
import { createUpstream } from '../../core/upstream';
import { SANDBOX_APP } from '../../core/upstream/settings';
import { getPublishStatus, publishVideo } from '../../core/upstream/vplat/publishing';
import { startSandbox } from '../../sandbox/server';
import { startMediaServer } from '../../test/helpers/receivers';
import { createBenchTenant, envInt, inBatches, percentile, startBenchStack, type StreamedEvent } from '../harness';

const N = envInt('BENCH_PUBLISHES', 100);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 10);
const WARMUP = envInt('BENCH_WARMUP', 10);
const POLL_MS = envInt('BENCH_POLL_MS', 100);
/** One publish slower than this fails the run: with the emulator this fast, something is wrong. */
const PUBLISH_TIMEOUT_MS = 30_000;

const PUBLISHING: PublishSettings = {
  pollIntervalMs: POLL_MS,
  pollAttempts: 30,
  slowPollScheduleMs: [500, 1_000],
  postIdWaitMs: 10_000,
  submitTimeoutMs: 35_000,
  submitRetryInitialMs: 500,
  submitWaitMs: 10_000,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Completion of the service's publishes, learned from `vplat.publish.status_changed` on one SSE
 * stream. Chosen over reading the record because it adds no work per publish: the workflow logs
 * the event and Postgres sends its NOTIFY whether or not anyone listens, and the one open stream
 * costs one event-log read per notification. Polling GET /v1/publish/records or the table instead
 * would add, per publish in flight, a query every poll on the pool and database the workflow's
 * activities use, and round each latency up to the poll's interval. The event is logged just
 * before the record's row is written (core/publishing/records.ts applyChange), so it marks the
 * moment the completion is durable.
 */
class Completions {
  private readonly seen = new Map<string, { at: number; failure?: string }>();
  private readonly waiting = new Map<string, (outcome: { at: number; failure?: string }) => void>();

  onEvent(event: StreamedEvent, at: number): void {
    const data = event.data as { record_id: string; status: PublishStatus; post_id: string | null; reason: string | null };
    let outcome: { at: number; failure?: string } | undefined;
    if (data.status === 'publish_complete' && data.post_id) outcome = { at };
    else if (data.status !== 'publish_complete' && isTerminal(data.status))
      outcome = { at, failure: `${data.status}: ${data.reason ?? 'no reason'}` };
    if (!outcome || this.seen.has(data.record_id)) return;
    this.seen.set(data.record_id, outcome);
    this.waiting.get(data.record_id)?.(outcome);
  }

  /** When the record reached publish_complete with its post id; an error if it ended otherwise. */
  async completedAt(recordId: string, timeoutMs: number): Promise<number> {
    const outcome =
      this.seen.get(recordId) ??
      (await new Promise<{ at: number; failure?: string }>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waiting.delete(recordId);
          reject(new Error(`publish ${recordId} did not complete within ${timeoutMs} ms`));
        }, timeoutMs);
        this.waiting.set(recordId, (o) => {
          clearTimeout(timer);
          this.waiting.delete(recordId);
          resolve(o);
        });
      }));
    if (outcome.failure) throw new Error(`publish ${recordId} ended ${outcome.failure}`);
    return outcome.at;
  }
}

interface ServiceSample {
  recordId: string;
  startedAt: number;
  answeredAt: number;
  completedAt: number;
}

interface BaselineSample {
  startedAt: number;
  submittedAt: number;
  completedAt: number;
  polls: number;
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];
const ms = (t: HistoryEvent['eventTime']) => Number(String(t?.seconds ?? 0)) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

async function main() {
  const logger = createLogger('warn', 'bench');
  const media = await startMediaServer();
  const sandbox = await startSandbox({
    host: '127.0.0.1',
    port: 0,
    logger,
    settings: {
      ...SANDBOX_APP,
      accessTokenTtlSeconds: { business: 86_400, shop: 604_800 },
      refreshTokenTtlSeconds: 31_536_000,
      // Completes as soon as the emulator's clock ticks (every 25 ms), post id included.
      publishProcessingMs: 1,
      postIdDelayMs: 1,
      downloadTimeoutMs: 5_000,
      webhookRetryDelaysMs: [100],
    },
  });
  // One client for the service and the baseline: the same HTTP agent and timeouts on both paths.
  const upstream = createUpstream({
    vplat: { baseUrl: sandbox.url, appId: SANDBOX_APP.vplatAppId, appSecret: SANDBOX_APP.vplatAppSecret },
    shop: { baseUrl: sandbox.url, authBaseUrl: sandbox.url, appKey: SANDBOX_APP.shopAppKey, appSecret: SANDBOX_APP.shopAppSecret },
    timeouts: { connectMs: 5_000, totalMs: 30_000 },
  });
  const closers: Array<() => Promise<unknown>> = [() => upstream.close(), () => sandbox.close(), () => media.close()];
  try {
    const created = await fetch(`${sandbox.url}/_sandbox/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ platform: 'business' }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!created.ok) throw new Error(`the emulator refused to create an account: HTTP ${created.status}`);
    const { account, tokens } = (await created.json()) as {
      account: { openId: string; username: string };
      tokens: { access_token: string };
    };

    const stack = await startBenchStack({
      name: 'publish',
      upstream,
      delivery: { retryScheduleMs: [1_000], attemptTimeoutMs: 5_000 },
      publishing: PUBLISHING,
      allowInsecureWebhookUrls: false,
      maxInFlightPerEndpoint: 10,
    });
    closers.unshift(() => stack.close());
    const tenant = await createBenchTenant(stack, { id: account.openId, username: account.username, accessToken: tokens.access_token });
    const completions = new Completions();
    await stack.streamEvents(tenant.apiKey, (event, at) => completions.onEvent(event, at), ['vplat.publish.status_changed']);

    const videoUrl = `${media.url}/video.mp4`;
    const servicePublish = async (caption: string): Promise<ServiceSample> => {
      const startedAt = Date.now();
      const res = await request(`${stack.gateway}/v1/vplat/v1.3/business/video/publish`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
        body: JSON.stringify({ account: account.openId, videoUrl, caption, isBrandOrganic: false, isBrandedContent: false }),
        headersTimeout: PUBLISH_TIMEOUT_MS,
        bodyTimeout: PUBLISH_TIMEOUT_MS,
      });
      const answer = (await res.body.json()) as { code: number; message?: string; data: { id: string } };
      if (res.statusCode !== 200 || answer.code !== 0)
        throw new Error(`publish refused: HTTP ${res.statusCode} code ${answer.code} ${answer.message ?? ''}`);
      const answeredAt = Date.now();
      const completedAt = await completions.completedAt(answer.data.id, PUBLISH_TIMEOUT_MS);
      return { recordId: answer.data.id, startedAt, answeredAt, completedAt };
    };
    const baselinePublish = async (caption: string): Promise<BaselineSample> => {
      const startedAt = Date.now();
      const { share_id } = await publishVideo(upstream.vplat, tokens.access_token, {
        business_id: account.openId,
        video_url: videoUrl,
        post_info: { caption, is_brand_organic: false, is_branded_content: false },
      });
      const submittedAt = Date.now();
      for (let polls = 1; polls <= PUBLISH_TIMEOUT_MS / POLL_MS; polls++) {
        // As the workflow does: a pause of the poll interval, then one status read.
        await sleep(POLL_MS);
        const status = await getPublishStatus(upstream.vplat, tokens.access_token, { business_id: account.openId, publish_id: share_id });
        if (status.status === 'PUBLISH_COMPLETE' && status.post_ids?.length)
          return { startedAt, submittedAt, completedAt: Date.now(), polls };
        if (status.status !== 'PROCESSING_DOWNLOAD' && status.status !== 'PUBLISH_COMPLETE')
          throw new Error(`baseline publish ${share_id} ended ${status.status}: ${status.reason ?? ''}`);
      }
      throw new Error(`baseline publish ${share_id} did not complete within ${PUBLISH_TIMEOUT_MS} ms`);
    };
    const run = async <T>(label: string, count: number, publish: (caption: string) => Promise<T>) => {
      const samples: T[] = [];
      const started = Date.now();
      await inBatches([...Array(count).keys()], CONCURRENCY, async (i) => {
        samples.push(await publish(`bench ${label} ${i}`));
      });
      return { samples, seconds: (Date.now() - started) / 1000 };
    };

    // Warm-up of both paths: JIT, connection pools, the worker's workflow cache and the
    // emulator's per-account state.
    await run('warm-up service', WARMUP, servicePublish);
    await run('warm-up baseline', WARMUP, baselinePublish);

    const postsOf = (prefix: string) => sandbox.context.posts.list(account.openId).filter((p) => p.caption.startsWith(prefix));
    const downloadsBefore = media.requests.length;
    const service = await run('service', N, servicePublish);
    const serviceDownloads = media.requests.length - downloadsBefore;
    const baseline = await run('baseline', N, baselinePublish);

    // After the measurement, so none of these reads falls inside it.
    const servicePosts = postsOf('bench service ');
    const distinctCaptions = new Set(servicePosts.map((p) => p.caption)).size;
    let recordsComplete = 0;
    for (const s of service.samples) {
      const row = await records.findPublishRecord(stack.db, s.recordId);
      if (row?.status === 'publish_complete' && row.postId) recordsComplete += 1;
    }
    const breakdown = {
      toStart: [] as number[],
      toSubmit: [] as number[],
      submit: [] as number[],
      pollWait: [] as number[],
      afterLastPoll: [] as number[],
      polls: [] as number[],
    };
    for (const s of service.samples) {
      const history = await stack.temporal.workflow.getHandle(workflowIds.publish(s.recordId)).fetchHistory();
      const events = history.events ?? [];
      const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
      const activityStarts = events.filter((e) => e.activityTaskStartedEventAttributes);
      const activityEnds = events.filter((e) => e.activityTaskCompletedEventAttributes);
      const fired = events.filter((e) => e.timerFiredEventAttributes);
      if (!started || activityStarts.length < 2 || activityEnds.length < 1 || fired.length < 1) continue;
      breakdown.toStart.push(ms(started.eventTime) - s.startedAt);
      breakdown.toSubmit.push(ms(activityStarts[0]!.eventTime) - ms(started.eventTime));
      breakdown.submit.push(ms(activityEnds[0]!.eventTime) - ms(activityStarts[0]!.eventTime));
      breakdown.pollWait.push(ms(fired[fired.length - 1]!.eventTime) - ms(activityEnds[0]!.eventTime));
      breakdown.afterLastPoll.push(s.completedAt - ms(fired[fired.length - 1]!.eventTime));
      breakdown.polls.push(fired.length);
      if (process.env.BENCH_SHOW_HISTORY && breakdown.polls.length === 1) {
        const t0 = ms(started.eventTime);
        console.log(
          events
            .map((e) => `+${ms(e.eventTime) - t0} ms ${Object.keys(e).find((k) => k.endsWith('EventAttributes')) ?? String(e.eventType)}`)
            .join('\n'),
        );
      }
    }

    const serviceLatency = service.samples.map((s) => s.completedAt - s.startedAt);
    const baselineLatency = baseline.samples.map((s) => s.completedAt - s.startedAt);
    const baselineMedian = percentile(baselineLatency, 50);
    const overhead = serviceLatency.map((l) => l - baselineMedian);
    const serviceRate = N / service.seconds;
    const baselineRate = N / baseline.seconds;
    const p = (values: number[]) =>
      `p50 ${percentile(values, 50).toFixed(0).padStart(5)} ms, p99 ${percentile(values, 99).toFixed(0).padStart(5)} ms`;
    const med = (values: number[]) => `${percentile(values, 50).toFixed(0).padStart(5)} ms`;

    console.log(
      `\nbench/publish: ${N} video publishes, ${CONCURRENCY} at a time, status polled every ${POLL_MS} ms; emulator completes in ~1 ms (its clock ticks every 25 ms); one machine (${process.version})`,
    );
    console.log(`${'variant'.padEnd(58)} ${'publishes/s'.padStart(12)} ${'ratio'.padStart(7)}`);
    console.log(
      `${'baseline: official publish + status polls from a loop'.padEnd(58)} ${baselineRate.toFixed(1).padStart(12)} ${'1.00'.padStart(7)}`,
    );
    console.log(
      `${'service: gateway, core, publish workflow, SSE'.padEnd(58)} ${serviceRate.toFixed(1).padStart(12)} ${(serviceRate / baselineRate).toFixed(2).padStart(7)}`,
    );
    console.log(`\nrequest to publish_complete with post id:`);
    console.log(`  baseline: ${p(baselineLatency)}`);
    console.log(`  service:  ${p(serviceLatency)}`);
    console.log(
      `  service overhead = each service publish's latency minus the baseline's median latency (${baselineMedian} ms): ${p(overhead)}`,
    );
    console.log(
      `\nofficial publish calls the emulator received for the service run: ${serviceDownloads} (video downloads, one per accepted call), posts created: ${servicePosts.length} (${distinctCaptions} distinct captions); expected ${N} each`,
    );
    console.log(`service records in publish_complete with a post id: ${recordsComplete}/${N}`);
    console.log(`\nwhere the service's time goes (medians over ${breakdown.polls.length} workflow histories):`);
    console.log(
      `  POST answered (record stored, workflow started, share id awaited): ${p(service.samples.map((s) => s.answeredAt - s.startedAt))}`,
    );
    const step = (label: string, values: number[], note = '') =>
      console.log(`  ${label.padEnd(52)} ${med(values)}${note ? `  ${note}` : ''}`);
    step('request -> workflow started', breakdown.toStart);
    step('workflow started -> submit activity running', breakdown.toSubmit);
    step('submit activity (official publish, record writes)', breakdown.submit);
    step('submit done -> last poll timer fired', breakdown.pollWait, `(${percentile(breakdown.polls, 50)} poll(s) of ${POLL_MS} ms)`);
    step(
      'last poll timer fired -> completion seen on SSE',
      breakdown.afterLastPoll,
      '(refresh activity, official status, event log, NOTIFY, stream)',
    );
    console.log(
      `  (Temporal fires no timer before now + history.timerProcessorMaxTimeShift, 1 s by default, so a ${POLL_MS} ms poll pause lasts about 1 s)`,
    );
    console.log(
      `baseline: official publish call ${med(baseline.samples.map((s) => s.submittedAt - s.startedAt))}, ${percentile(
        baseline.samples.map((s) => s.polls),
        50,
      )} poll(s) at the median`,
    );
  } finally {
    for (const close of closers) await close().catch((err: unknown) => console.error('bench: cleanup failed:', err));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
