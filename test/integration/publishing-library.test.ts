/**
 * Publishing a video from the library: the platform fetches the service's own signed URL, the
 * probe of the upload is checked against the account's maximum duration, and a deleted, foreign
 * or shop track record is refused in the spec's order (1007 before 1005, 2005 for deleted).
 */
import { call } from '../helpers/http';
import { mp4File } from '../helpers/mp4';
import { matroskaFile } from '../helpers/webm';
import { eventually } from '../helpers/receivers';
import { createTenant, type Stack, type Tenant } from '../helpers/stack';
import { bindSandboxSeat, startWorkingStack, type SandboxAccount, type WorkingStack } from '../helpers/working-stack';
import { uploadMultipart } from '../helpers/videos';

interface VideoJson {
  id: string;
  status: string;
  videoUrl: string | null;
  probe: { durationSeconds: number | null; width: number | null; height: number | null; videoCodec: string | null } | null;
}
interface RecordJson {
  id: string;
  status: string;
  videoId: string | null;
  postId: string | null;
}

describe('publishing from the video library', () => {
  let env: WorkingStack;
  let stack: Stack;
  let tenant: Tenant;
  let account: SandboxAccount;

  beforeAll(async () => {
    env = await startWorkingStack('publish-library');
    stack = env.stack;
    tenant = await createTenant(stack, { seatQuota: 5 });
    ({ account } = await bindSandboxSeat(env, tenant, 'business'));
  }, 120_000);
  afterAll(() => env?.close());

  const upload = async (bytes: Buffer, t: Tenant = tenant, target = account.openId, fileName = 'clip.mp4') => {
    const res = await uploadMultipart<VideoJson>(stack.baseUrl, t.apiKey, [
      { name: 'account', value: target },
      { name: 'file', value: { fileName, bytes } },
    ]);
    expect(res.body.code).toBe(0);
    return res.body.data;
  };
  const publish = (body: object, t: Tenant = tenant) =>
    call<RecordJson>(stack.baseUrl, 'POST', '/v1/vplat/v1.3/business/video/publish', {
      key: t.apiKey,
      json: { account: account.openId, isBrandOrganic: false, isBrandedContent: false, ...body },
    });
  const finished = (id: string) =>
    eventually(
      () => call<{ items: RecordJson[] }>(stack.baseUrl, 'GET', '/v1/publish/records?limit=100', { key: tenant.apiKey }),
      (r) => r.body.data.items.some((i) => i.id === id && i.postId !== null),
      15_000,
    ).then((r) => r.body.data.items.find((i) => i.id === id)!);

  it("probes the upload and publishes it by id: the platform downloads the service's signed URL", async () => {
    const video = await upload(mp4File({ durationMs: 15_000, width: 1080, height: 1920 }));
    expect(video.probe).toEqual({ durationSeconds: 15, width: 1080, height: 1920, videoCodec: 'avc1.64001f', audioCodec: null });
    const res = await publish({ videoId: video.id, caption: 'from the library' });
    expect(res.body.code).toBe(0);
    expect(res.body.data.videoId).toBe(video.id);
    const done = await finished(res.body.data.id);
    expect(done).toMatchObject({ status: 'publish_complete', videoId: video.id });
  });

  it('recognises its own videoUrl as the library record', async () => {
    const video = await upload(mp4File({ durationMs: 5_000 }));
    const res = await publish({ videoUrl: video.videoUrl, caption: 'by url' });
    expect(res.body.data.videoId).toBe(video.id);
    expect((await finished(res.body.data.id)).status).toBe('publish_complete');
  });

  it('refuses a video longer than the account may post, before sending it', async () => {
    const video = await upload(mp4File({ durationMs: 601_000 }));
    const res = await publish({ videoId: video.id });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 2001, message: expect.stringMatching(/^videoId: the video lasts 601 s; .* at most 600 s/) });
  });

  it('probes a WebM upload too, and refuses it when it is longer than the account may post', async () => {
    const short = await upload(await matroskaFile({ durationMs: 4_000, width: 720, height: 1280 }), tenant, account.openId, 'clip.webm');
    expect(short.probe).toEqual({
      durationSeconds: 4,
      width: 720,
      height: 1280,
      videoCodec: expect.stringMatching(/^vp09/),
      audioCodec: null,
    });
    const long = await upload(await matroskaFile({ durationMs: 601_000, width: 720, height: 1280 }), tenant, account.openId, 'long.webm');
    const res = await publish({ videoId: long.id });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 2001, message: expect.stringMatching(/^videoId: the video lasts 601 s; .* at most 600 s/) });
  });

  it('answers 2005 for a deleted video, by id and by its old URL', async () => {
    const video = await upload(mp4File({ durationMs: 5_000 }));
    expect((await call(stack.baseUrl, 'DELETE', `/v1/videos/${video.id}`, { key: tenant.apiKey })).body.code).toBe(0);
    for (const ref of [{ videoId: video.id }, { videoUrl: video.videoUrl }]) {
      const res = await publish(ref);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe(2005);
    }
    // The account is checked first: a wrong account with the same deleted video is 1007.
    expect((await publish({ account: 'not-mine', videoId: video.id })).body.code).toBe(1007);
  });

  it("answers 1005 for another customer's video and for a shop track record", async () => {
    const other = await createTenant(stack);
    const { account: otherAccount } = await bindSandboxSeat(env, other, 'business');
    const theirs = await upload(mp4File({ durationMs: 5_000 }), other, otherAccount.openId);
    const foreign = await publish({ videoId: theirs.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe(1005);

    const { seatId: shopSeatId } = await bindSandboxSeat(env, tenant, 'shop');
    const shopVideo = await uploadMultipart<VideoJson>(stack.baseUrl, tenant.apiKey, [
      { name: 'seatId', value: shopSeatId },
      { name: 'file', value: { fileName: 'shop.mp4', bytes: mp4File({ durationMs: 5_000 }) } },
    ]);
    expect(shopVideo.body.code).toBe(0);
    const wrongTrack = await publish({ videoId: shopVideo.body.data.id });
    expect(wrongTrack.body).toMatchObject({ code: 1005, message: expect.stringContaining('shop track') });
  });

  it('answers 1005 for a library record id passed where a share id belongs', async () => {
    const video = await upload(mp4File({ durationMs: 5_000 }));
    const res = await call(stack.baseUrl, 'GET', `/v1/vplat/v1.3/business/publish/status?publishId=${video.id}&account=${account.openId}`, {
      key: tenant.apiKey,
    });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 1005, message: expect.stringContaining('video library record id') });
  });
});
