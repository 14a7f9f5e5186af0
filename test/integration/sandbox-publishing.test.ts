/**
 * Contract of the emulated Business API's OAuth, webhook subscription and publishing paths,
 * called both raw (shapes, envelope, errors) and through the service's typed client.
 */
import { UpstreamError } from '../../core/upstream/failures';
import { exchangeAuthCode, getTokenInfo, refreshAccessToken, revokeAccessToken } from '../../core/upstream/vplat/oauth';
import {
  getPublishStatus,
  getVideoSettings,
  publishPhoto,
  publishVideo,
  searchLocations,
  suggestHashtags,
} from '../../core/upstream/vplat/publishing';
import { updateWebhook, verifyOfficialWebhook } from '../../core/upstream/vplat/webhooks';
import { eventually, startMediaServer, startWebhookReceiver, type MediaServer, type WebhookReceiver } from '../helpers/receivers';
import { official, startTestSandbox, TEST_SANDBOX_SETTINGS, type TestSandbox } from '../helpers/sandbox';

describe('sandbox: Business API OAuth, webhooks and publishing', () => {
  let sb: TestSandbox;
  let media: MediaServer;
  let receiver: WebhookReceiver;
  let account: Awaited<ReturnType<TestSandbox['account']>>;

  beforeAll(async () => {
    sb = await startTestSandbox();
    media = await startMediaServer();
    receiver = await startWebhookReceiver();
    account = await sb.account('business');
    await updateWebhook(sb.upstream.vplat, { eventType: 'VIDEO', callbackUrl: receiver.url });
  });
  afterAll(async () => {
    await sb?.close();
    await media?.close();
    await receiver?.close();
  });

  const status = (shareId: string) =>
    getPublishStatus(sb.upstream.vplat, account.tokens.access_token, { business_id: account.openId, publish_id: shareId });
  const videoBody = (videoUrl: string, postInfo: Record<string, unknown> = {}) => ({
    business_id: account.openId,
    video_url: videoUrl,
    post_info: { caption: 'Hello #sandbox', is_brand_organic: false, is_branded_content: false, ...postInfo },
  });

  describe('errors in the official envelope', () => {
    it('answers a missing token with HTTP 200 and code 40104', async () => {
      const res = await official(sb.url, 'GET', '/open_api/v1.3/business/video/settings/', { query: { business_id: account.openId } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 40104, message: expect.stringContaining('Access-Token'), request_id: expect.any(String), data: {} });
    });

    it('refuses a business_id that is not the token owner', async () => {
      const res = await official(sb.url, 'GET', '/open_api/v1.3/business/video/settings/', {
        token: account.tokens.access_token,
        query: { business_id: 'someone-else' },
      });
      expect(res.body.code).toBe(40001);
    });

    it('names a missing required field', async () => {
      const res = await official(sb.url, 'POST', '/open_api/v1.3/business/video/publish/', {
        token: account.tokens.access_token,
        json: { business_id: account.openId, post_info: {} },
      });
      expect(res.body).toMatchObject({ code: 40002, message: 'video_url: Missing data for required field.', data: {} });
    });

    it('answers a path without its trailing slash with HTTP 404', async () => {
      const res = await official(sb.url, 'GET', '/open_api/v1.3/business/video/settings', {
        token: account.tokens.access_token,
        query: { business_id: account.openId },
      });
      expect(res.status).toBe(404);
    });

    it('refuses malformed JSON', async () => {
      const res = await fetch(`${sb.url}/open_api/v1.3/business/video/publish/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': account.tokens.access_token },
        body: '{"business_id":',
      });
      expect(((await res.json()) as { code: number }).code).toBe(40000);
    });

    it('keeps the official message on the client side as 3001', async () => {
      const err = await publishVideo(sb.upstream.vplat, account.tokens.access_token, {
        ...videoBody(`${media.url}/video.mp4`),
        post_info: { caption: 'x'.repeat(2201) },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).code).toBe(3001);
      expect((err as UpstreamError).failure).toMatchObject({ officialCode: 40002, failureClass: 'bad_request', retryable: false });
      expect((err as UpstreamError).message).toContain('post_info.caption');
    });
  });

  describe('OAuth', () => {
    const redirectUri = 'https://app.example/callback';

    async function authorize(openId: string): Promise<string> {
      const page = await fetch(
        `${sb.url}/v2/auth/authorize?client_key=${TEST_SANDBOX_SETTINGS.vplatAppId}&response_type=code&redirect_uri=${encodeURIComponent(redirectUri)}&state=s1`,
      );
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`value="${openId}"`);
      const approve = await fetch(`${sb.url}/v2/auth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_key: TEST_SANDBOX_SETTINGS.vplatAppId,
          redirect_uri: redirectUri,
          state: 's1',
          scope: 'video.publish,video.list',
          open_id: openId,
          decision: 'approve',
        }),
      });
      expect(approve.status).toBe(302);
      const location = new URL(approve.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
      expect(location.searchParams.get('state')).toBe('s1');
      return location.searchParams.get('code')!;
    }

    it('exchanges an approved code once for tokens with the official fields and lifetimes', async () => {
      const code = await authorize(account.openId);
      const tokens = await exchangeAuthCode(sb.upstream.vplat, { authCode: code, redirectUri });
      expect(tokens).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        scope: 'video.publish,video.list',
        expires_in: 86_400,
        refresh_token: expect.any(String),
        refresh_token_expires_in: 31_536_000,
        open_id: account.openId,
      });
      expect(await getVideoSettings(sb.upstream.vplat, tokens.access_token, { business_id: account.openId })).toHaveProperty(
        'max_video_post_duration_sec',
      );
      const again = await exchangeAuthCode(sb.upstream.vplat, { authCode: code, redirectUri }).catch((e: unknown) => e);
      expect((again as UpstreamError).failure.officialCode).toBe(40110);
    });

    it('sends a denied consent back with error=access_denied', async () => {
      const res = await fetch(`${sb.url}/v2/auth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_key: TEST_SANDBOX_SETTINGS.vplatAppId,
          redirect_uri: redirectUri,
          state: 's2',
          open_id: account.openId,
          decision: 'deny',
        }),
      });
      expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    });

    it('rotates the refresh token, and a revoked access token stops working', async () => {
      const other = await sb.account('business');
      const refreshed = await refreshAccessToken(sb.upstream.vplat, other.tokens.refresh_token);
      expect(refreshed.open_id).toBe(other.openId);
      const reused = await refreshAccessToken(sb.upstream.vplat, other.tokens.refresh_token).catch((e: unknown) => e);
      expect((reused as UpstreamError).failure).toMatchObject({ officialCode: 40107, failureClass: 'auth', retryable: false });
      expect(await getTokenInfo(sb.upstream.vplat, refreshed.access_token)).toMatchObject({ creator_id: other.openId });
      await revokeAccessToken(sb.upstream.vplat, refreshed.access_token);
      const after = await getVideoSettings(sb.upstream.vplat, refreshed.access_token, { business_id: other.openId }).catch(
        (e: unknown) => e,
      );
      expect((after as UpstreamError).failure).toMatchObject({ officialCode: 40105, failureClass: 'auth' });
    });
  });

  describe('video publishing', () => {
    it('downloads the video, processes it, completes, and shows the post id after the delay, pushing signed webhooks', async () => {
      const { share_id } = await publishVideo(sb.upstream.vplat, account.tokens.access_token, videoBody(`${media.url}/video.mp4`));
      expect(share_id).toMatch(/^v_pub_url~v1\.\d{19}$/);
      expect(await status(share_id)).toEqual({ status: 'PROCESSING_DOWNLOAD' });
      const complete = await eventually(
        () => status(share_id),
        (s) => s.status === 'PUBLISH_COMPLETE',
      );
      expect(complete.post_ids).toBeUndefined();
      const withPost = await eventually(
        () => status(share_id),
        (s) => (s.post_ids?.length ?? 0) > 0,
      );
      expect(withPost.post_ids![0]).toMatch(/^\d{19}$/);
      expect(media.requests).toContain('/video.mp4');

      const pushes = await receiver.waitFor(2, (p) => p.body.includes(share_id));
      for (const push of pushes) {
        const verdict = verifyOfficialWebhook({
          appSecret: TEST_SANDBOX_SETTINGS.vplatAppSecret,
          appId: TEST_SANDBOX_SETTINGS.vplatAppId,
          signatureHeader: push.headers['tiktok-signature'] as string,
          rawBody: push.body,
        });
        expect(verdict.ok).toBe(true);
        expect(push.headers['webhook-schema-version']).toBe('1.0');
      }
      const events = pushes.map((p) => JSON.parse(p.body) as { event: string; content: string });
      expect(events.map((e) => e.event)).toEqual(['post.publish.complete', 'post.publish.publicly_available']);
      expect(JSON.parse(events[1]!.content)).toEqual({
        publish_id: share_id,
        publish_type: 'DIRECT_PUBLISH',
        post_id: withPost.post_ids![0],
      });
    });

    it('follows a redirect to the video, as a CDN link may answer', async () => {
      const { share_id } = await publishVideo(sb.upstream.vplat, account.tokens.access_token, videoBody(`${media.url}/moved.mp4`));
      await eventually(
        () => status(share_id),
        (s) => s.status === 'PUBLISH_COMPLETE',
      );
      expect(media.requests[media.requests.lastIndexOf('/moved.mp4') + 1]).toBe('/video.mp4');
    });

    it('fails with video_pull_failed when the URL cannot be fetched, like an expired link', async () => {
      const { share_id } = await publishVideo(sb.upstream.vplat, account.tokens.access_token, videoBody(`${media.url}/expired.mp4`));
      expect(
        await eventually(
          () => status(share_id),
          (s) => s.status !== 'PROCESSING_DOWNLOAD',
        ),
      ).toEqual({ status: 'FAILED', reason: 'video_pull_failed' });
    });

    it('fails with file_format_check_failed when the download is not a video', async () => {
      const { share_id } = await publishVideo(sb.upstream.vplat, account.tokens.access_token, videoBody(`${media.url}/text.txt`));
      expect(
        await eventually(
          () => status(share_id),
          (s) => s.status !== 'PROCESSING_DOWNLOAD',
        ),
      ).toEqual({ status: 'FAILED', reason: 'file_format_check_failed' });
    });

    it('plays the outcome a test chose for the next publish', async () => {
      await sb.control('POST', `/_sandbox/accounts/${account.openId}/next-publish`, {
        outcome: 'failed',
        reason: 'spam_risk_too_many_posts',
      });
      const { share_id } = await publishVideo(sb.upstream.vplat, account.tokens.access_token, videoBody(`${media.url}/video.mp4`));
      expect(
        await eventually(
          () => status(share_id),
          (s) => s.status !== 'PROCESSING_DOWNLOAD',
        ),
      ).toEqual({ status: 'FAILED', reason: 'spam_risk_too_many_posts' });
      const failed = await receiver.waitFor(1, (p) => p.body.includes(share_id));
      expect(JSON.parse(failed[0]!.body)).toMatchObject({ event: 'post.publish.failed', user_openid: account.openId });
    });

    it('delivers a draft to the inbox', async () => {
      const { share_id } = await publishVideo(
        sb.upstream.vplat,
        account.tokens.access_token,
        videoBody(`${media.url}/video.mp4`, { upload_to_draft: true }),
      );
      expect(
        await eventually(
          () => status(share_id),
          (s) => s.status !== 'PROCESSING_DOWNLOAD',
        ),
      ).toEqual({ status: 'SEND_TO_USER_INBOX' });
    });

    it('keeps processing on its own clock, which a test can move', async () => {
      const slow = await startTestSandbox({ settings: { publishProcessingMs: 3_600_000 } });
      try {
        const acc = await slow.account('business');
        const { share_id } = await publishVideo(slow.upstream.vplat, acc.tokens.access_token, {
          ...videoBody(`${media.url}/video.mp4`),
          business_id: acc.openId,
        });
        const read = () =>
          getPublishStatus(slow.upstream.vplat, acc.tokens.access_token, { business_id: acc.openId, publish_id: share_id });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await read()).status).toBe('PROCESSING_DOWNLOAD');
        await slow.control('POST', '/_sandbox/clock', { advanceMs: 3_600_000 });
        expect((await eventually(read, (s) => s.status !== 'PROCESSING_DOWNLOAD')).status).toBe('PUBLISH_COMPLETE');
      } finally {
        await slow.close();
      }
    });

    it('refuses the status of another account’s publish', async () => {
      const { share_id } = await publishVideo(sb.upstream.vplat, account.tokens.access_token, videoBody(`${media.url}/video.mp4`));
      const other = await sb.account('business');
      const err = await getPublishStatus(sb.upstream.vplat, other.tokens.access_token, {
        business_id: other.openId,
        publish_id: share_id,
      }).catch((e: unknown) => e);
      expect((err as UpstreamError).failure.officialCode).toBe(40007);
    });
  });

  describe('photo publishing and publishing aids', () => {
    it('publishes photos with a privacy level from the settings', async () => {
      const settings = await getVideoSettings(sb.upstream.vplat, account.tokens.access_token, { business_id: account.openId });
      expect(settings).toEqual({
        privacy_level_options: ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'],
        comment_disabled: false,
        duet_disabled: false,
        stitch_disabled: false,
        max_video_post_duration_sec: 600,
      });
      const { share_id } = await publishPhoto(sb.upstream.vplat, account.tokens.access_token, {
        business_id: account.openId,
        photo_images: [`${media.url}/photo.jpg`, `${media.url}/photo.jpg`],
        post_info: { privacy_level: 'SELF_ONLY', title: 'Two photos', is_brand_organic: false, is_branded_content: false },
      });
      expect(share_id).toMatch(/^p_pub_url~v1\.\d{19}$/);
      expect(
        (
          await eventually(
            () => status(share_id),
            (s) => s.status !== 'PROCESSING_DOWNLOAD',
          )
        ).status,
      ).toBe('PUBLISH_COMPLETE');
    });

    it('refuses more than 35 photos and a privacy level the account does not offer', async () => {
      const base = {
        business_id: account.openId,
        post_info: { privacy_level: 'SELF_ONLY' as const, is_brand_organic: false, is_branded_content: false },
      };
      const tooMany = await publishPhoto(sb.upstream.vplat, account.tokens.access_token, {
        ...base,
        photo_images: Array(36).fill(`${media.url}/photo.jpg`),
      }).catch((e: unknown) => e);
      expect((tooMany as UpstreamError).message).toContain('photo_images');
      const privacy = await publishPhoto(sb.upstream.vplat, account.tokens.access_token, {
        ...base,
        photo_images: [`${media.url}/photo.jpg`],
        post_info: { ...base.post_info, privacy_level: 'FOLLOWER_OF_CREATOR' },
      }).catch((e: unknown) => e);
      expect((privacy as UpstreamError).message).toContain('post_info.privacy_level');
    });

    it('suggests 10 hashtags with the exact match first, and searches locations', async () => {
      const { suggestions } = await suggestHashtags(sb.upstream.vplat, account.tokens.access_token, {
        business_id: account.openId,
        keyword: 'coffee',
      });
      expect(suggestions).toHaveLength(10);
      expect(suggestions[0]).toEqual({ name: 'coffee', view_count: expect.any(Number) });
      const { locations } = await searchLocations(sb.upstream.vplat, account.tokens.access_token, {
        business_id: account.openId,
        search_query: 'paris',
      });
      expect(locations.length).toBeGreaterThan(0);
      expect(locations[0]).toEqual({
        location_name: expect.any(String),
        location_id: expect.any(String),
        location_address: expect.stringContaining('Paris'),
      });
    });
  });
});
