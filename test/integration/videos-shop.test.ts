/**
 * The shop track library against the emulator: a stored file is handed to the shop's upload API
 * with the seat's real token, the record answers the file id the emulator issued, and our copy of
 * the bytes is removed since the shop holds them.
 */
import { shopState } from '../../sandbox/shop/state';
import { call } from '../helpers/http';
import type { TestSandbox } from '../helpers/sandbox';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type WorkingStack } from '../helpers/working-stack';
import { mp4Bytes, sha256, startSourceServer, uploadMultipart, type SourceServer } from '../helpers/videos';

interface VideoJson {
  id: string;
  track: string;
  status: string;
  fileId: string | null;
  videoUrl: string | null;
  expiresAt: string | null;
  sha256: string | null;
  workflowId: string | null;
  failureReason: string | null;
  seatId?: string;
  next?: string | null;
}

describe('video library (shop track)', () => {
  let env: WorkingStack;
  let stack: Stack;
  let sb: TestSandbox;
  let source: SourceServer;
  let tenant: Tenant;
  let seatId: string;
  let openId: string;

  beforeAll(async () => {
    env = await startWorkingStack('videos-shop');
    ({ stack, sb } = env);
    source = await startSourceServer();
    tenant = await createTenant(stack);
    const bound = await bindSandboxSeat(env, tenant, 'shop');
    openId = bound.account.openId;
    seatId = bound.seatId;
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await source?.close();
  });

  it('hands a direct upload to the shop and answers the file id it issued', async () => {
    const bytes = mp4Bytes(256 * 1024);
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'account', value: openId },
      { name: 'file', value: { fileName: 'product.mp4', bytes } },
    ]);
    expect(res.body.code).toBe(0);
    expect(res.body.data).toMatchObject({
      track: 'shop',
      status: 'available',
      fileId: expect.any(String),
      videoUrl: null,
      expiresAt: null,
      sha256: sha256(bytes),
      workflowId: `upload-${res.body.data.id}`,
    });
    // The shop holds the bytes now; ours are gone.
    expect(await stack.media.size(`videos/${res.body.data.id}`)).toBeUndefined();
    // The emulator issued that id to this account, unused, for these bytes.
    const file = shopState(sb.sandbox.context).files.usableVideo(openId, res.body.data.fileId!);
    expect(file).toMatchObject({ size: bytes.length, format: 'MP4' });
  });

  it('fetches a remote source for the shop track, hands it over in the same workflow and answers the file id', async () => {
    // No seatId or account: the tenant's only bound seat is this shop seat, so its library it is.
    const res = await call<VideoJson>(stack.baseUrl, 'POST', '/v1/videos', {
      key: tenant.apiKey,
      json: { sourceUrl: `${source.url}/video.mp4` },
    });
    expect({ code: res.body.code, message: res.body.message }).toEqual({ code: 0, message: 'ok' });
    expect(res.body.data).toMatchObject({
      seatId,
      track: 'shop',
      status: 'available',
      fileId: expect.any(String),
      videoUrl: null,
      sha256: sha256(source.video),
      next: null,
    });
    expect(shopState(sb.sandbox.context).files.usableVideo(openId, res.body.data.fileId!)).toMatchObject({ size: source.video.length });
    // The record reads the same.
    const record = await call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${res.body.data.id}`, { key: tenant.apiKey });
    expect(record.body.data).toMatchObject({ status: 'available', fileId: res.body.data.fileId });
  });

  it('answers the shop’s refusal of the token as an error with its code, and fails the record with the shop’s reason', async () => {
    const { account, seatId: revokedSeatId } = await bindSandboxSeat(env, tenant, 'shop');
    await sb.control('POST', `/_sandbox/accounts/${account.openId}/deauthorize`);
    const res = await uploadMultipart<{ videoId: string }>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: revokedSeatId },
      { name: 'file', value: { fileName: 'x.mp4', bytes: mp4Bytes(4096) } },
    ]);
    expect(res.body).toMatchObject({ code: 3001, message: expect.any(String), data: { videoId: expect.any(String) } });
    const record = await call<VideoJson>(stack.baseUrl, 'GET', `/v1/videos/${res.body.data.videoId}`, { key: tenant.apiKey });
    expect(record.body.data).toMatchObject({ status: 'failed', fileId: null, failureReason: res.body.message });
    expect(await stack.media.size(`videos/${res.body.data.videoId}`)).toBeUndefined();
  });
});
