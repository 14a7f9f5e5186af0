/**
 * A 1 GB direct upload, generated on the fly and streamed through the gateway to the media store:
 * the file arrives whole (same SHA-256) while the process's memory stays flat, and is not cut off
 * by body timeouts much shorter than the upload. The client, the
 * gateway and core share this process, so its live memory bounds what the upload path holds. Also the shop
 * track's own 100 MB cap, under a service cap above it.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack, type Tenant } from '../helpers/stack';
import { postStream, streamingMultipart } from '../helpers/videos';

/** The collector, which jest's workers do not expose: switched on here, for this file only. */
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe('large direct uploads', () => {
  let stack: Stack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({
      videos: { maxBytes: Math.floor(1.1 * GiB) },
      // Limits far below the upload's duration: one that keeps sending is never cut, and the waits
      // of our own store (backpressure, while the client is held back) are no pause of the client's.
      httpTimeouts: { bodyIdleMs: 2_000, requestMs: 2_000 },
    });
    tenant = await createTenant(stack);
  });
  afterAll(() => stack?.close());

  it('streams a 1 GB upload to storage with bounded memory', async () => {
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
    // What the upload path retains, not garbage it has yet to collect: the client pauses at each
    // quarter of the file, and live heap and buffers are read after a full collection. A path that
    // held the file would keep at least the part already sent (256 MiB at the first pause).
    const live = () => {
      collectGarbage();
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const baseline = live();
    let peak = baseline;
    const quarters = [1, 2, 3].map((q) => (q * GiB) / 4);
    const upload = streamingMultipart({ seatId: seat.id }, GiB, {
      at: quarters,
      onPause: () => {
        peak = Math.max(peak, live());
      },
    });
    const started = Date.now();
    const res = await postStream<{ id: string; status: string; sizeBytes: number; sha256: string }>(
      `${stack.baseUrl}/v1/videos`,
      tenant.apiKey,
      upload.body,
      upload.contentType,
    );
    const seconds = (Date.now() - started) / 1000;
    const growthMb = (peak - baseline) / MiB;
    // The figures docs/api.md quotes (video library).
    process.stdout.write(`1 GiB direct upload: ${seconds.toFixed(1)} s, peak live heap and buffer growth ${growthMb.toFixed(0)} MB\n`);
    expect(res.body.code).toBe(0);
    expect(res.body.data).toMatchObject({ status: 'available', sizeBytes: GiB, sha256: upload.sha256() });
    expect(await stack.media.size(`videos/${res.body.data.id}`)).toBe(GiB);
    expect(growthMb).toBeLessThan(64);
    await stack.media.remove(`videos/${res.body.data.id}`);
  }, 120_000);

  it('keeps the shop’s 100 MB limit on the shop track whatever the service cap', async () => {
    const seat = await createBoundSeat(stack, tenant, Track.SHOP, uniqueAccount('creator'));
    const upload = streamingMultipart({ seatId: seat.id }, 101 * MiB);
    const res = await postStream<{ videoId: string }>(`${stack.baseUrl}/v1/videos`, tenant.apiKey, upload.body, upload.contentType);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 2001, message: `file: larger than the limit of ${100 * MiB} bytes` });
  }, 60_000);
});
