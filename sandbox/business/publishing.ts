/**
 * Video and photo publishing, the status query, publish settings, hashtag suggestions and location
 * search. A publish really downloads its media (so an expired or unreachable URL fails the task
 * as on the platform), then processes on the emulator's clock and ends as the test chose:
 * complete (the post id appears after a further delay), failed with a reason, or an inbox draft.
 */
import { randomInt } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { getGlobalDispatcher, interceptors, request } from 'undici';
import type { Account } from '../accounts';
import { officialRoute, requireOwnBusiness, type SandboxContext } from '../context';
import { BUSINESS, OfficialError } from '../official-error';
import type { Params } from '../params';
import { imageInfo, videoFormat, type ImageFormat, type VideoFormat } from '../../core/media/formats';
import { stableNumber } from '../posts';

type Status = 'PROCESSING_DOWNLOAD' | 'PUBLISH_COMPLETE' | 'FAILED' | 'SEND_TO_USER_INBOX';

interface PublishTask {
  shareId: string;
  openId: string;
  media: 'VIDEO' | 'PHOTO';
  status: Status;
  reason?: string;
  /** Set when the post became public; listed in the status only once `postIdVisibleAt` has passed. */
  postId?: string;
  postIdVisibleAt?: number;
}

const PRIVACY_LEVELS = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] as const;
const MAX_VIDEO_BYTES = 1024 * 1024 * 1024;
const MAX_PHOTO_BYTES = 20 * 1024 * 1024;

const LOCATIONS = [
  ['Eiffel Tower', 'Champ de Mars, 5 Av. Anatole France, 75007 Paris, France'],
  ['Louvre Museum', 'Rue de Rivoli, 75001 Paris, France'],
  ['Central Park', 'New York, NY, United States'],
  ['Times Square', 'Manhattan, NY 10036, United States'],
  ['Shibuya Crossing', '2 Chome-2-1 Dogenzaka, Shibuya City, Tokyo, Japan'],
  ['Tokyo Tower', '4 Chome-2-8 Shibakoen, Minato City, Tokyo, Japan'],
  ['Sydney Opera House', 'Bennelong Point, Sydney NSW 2000, Australia'],
  ['Brandenburg Gate', 'Pariser Platz, 10117 Berlin, Germany'],
  ['Colosseum', 'Piazza del Colosseo, 1, 00184 Roma RM, Italy'],
  ['Golden Gate Bridge', 'San Francisco, CA, United States'],
  ['Marina Bay Sands', '10 Bayfront Ave, Singapore 018956'],
  ['Big Ben', 'London SW1A 0AA, United Kingdom'],
] as const;

const HASHTAG_SUFFIXES = ['', 'tips', 'life', 'daily', 'fyp', 'viral', 'style', 'hacks', 'love', 'trend'];

function shareId(prefix: 'v' | 'p'): string {
  const digits = `${randomInt(1, 10)}${Array.from({ length: 18 }, () => randomInt(0, 10)).join('')}`;
  return `${prefix}_pub_url~v1.${digits}`;
}

/** The containers and photo formats the platform takes for publishing. */
const VIDEO_PUBLISH_FORMATS: readonly VideoFormat[] = ['MP4', 'MOV', 'WEBM'];
const PHOTO_PUBLISH_FORMATS: readonly ImageFormat[] = ['JPEG', 'WEBP'];
/** Enough of a download to recognise its format. */
const HEAD_BYTES = 256;
/** Redirects a media download follows, as a CDN link may send the platform elsewhere first. */
const MAX_REDIRECTS = 3;

async function acceptedFormat(media: 'VIDEO' | 'PHOTO', head: Buffer): Promise<boolean> {
  if (media === 'VIDEO') {
    const format = await videoFormat(head);
    return format !== undefined && VIDEO_PUBLISH_FORMATS.includes(format);
  }
  const format = (await imageInfo(head))?.format;
  return format !== undefined && PHOTO_PUBLISH_FORMATS.includes(format);
}

function checkMediaUrl(field: string, value: string): void {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw BUSINESS.invalid(field, 'Not a valid URL.');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw BUSINESS.invalid(field, 'Not a valid URL.');
}

/** Mentions as the platform counts them: @name tokens in the caption. */
function mentionCount(caption: string): number {
  return caption.match(/(^|\s)@[\w.]+/g)?.length ?? 0;
}

export function registerPublishing(app: FastifyInstance, ctx: SandboxContext): void {
  const tasks = new Map<string, PublishTask>();

  const privacyOptions = (account: Account) =>
    account.isPrivate
      ? ['FOLLOWER_OF_CREATOR', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY']
      : ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];

  const notify = (task: PublishTask, event: string, extra: Record<string, unknown> = {}) => {
    // Only video posts have publish webhooks on the platform.
    if (task.media !== 'VIDEO') return;
    ctx.webhooks.push(event, task.openId, { publish_id: task.shareId, publish_type: 'DIRECT_PUBLISH', ...extra });
  };

  const fail = (task: PublishTask, reason: string) => {
    task.status = 'FAILED';
    task.reason = reason;
    notify(task, 'post.publish.failed', { reason });
  };

  /** Reads a media URL for real, as the platform does, and returns its first bytes. */
  const download = async (url: string, maxBytes: number): Promise<Buffer> => {
    const response = await request(url, {
      method: 'GET',
      headersTimeout: ctx.settings.downloadTimeoutMs,
      bodyTimeout: ctx.settings.downloadTimeoutMs,
      signal: AbortSignal.timeout(ctx.settings.downloadTimeoutMs),
      dispatcher: getGlobalDispatcher().compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS })),
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`HTTP ${response.statusCode}`);
    }
    let total = 0;
    const head: Buffer[] = [];
    for await (const chunk of response.body) {
      const buffer = chunk as Buffer;
      if (total < HEAD_BYTES) head.push(buffer);
      total += buffer.length;
      if (total > maxBytes) {
        response.body.destroy();
        throw new Error('too large');
      }
    }
    return Buffer.concat(head);
  };

  const finish = (task: PublishTask, caption: string, draft: boolean) => {
    const chosen = ctx.outcomes.next(task.openId);
    if (chosen?.kind === 'failed') return fail(task, chosen.reason);
    if (draft || chosen?.kind === 'draft') {
      task.status = 'SEND_TO_USER_INBOX';
      return;
    }
    task.status = 'PUBLISH_COMPLETE';
    notify(task, 'post.publish.complete');
    const post = ctx.posts.add({
      openId: task.openId,
      mediaType: task.media,
      caption,
      createTime: ctx.clock.nowSeconds(),
      durationSeconds: 15 + stableNumber(task.shareId, 45),
    });
    task.postId = post.itemId;
    task.postIdVisibleAt = ctx.clock.now() + ctx.settings.postIdDelayMs;
    ctx.clock.after(ctx.settings.postIdDelayMs, () => notify(task, 'post.publish.publicly_available', { post_id: post.itemId }));
  };

  const play = (task: PublishTask, urls: string[], caption: string, draft: boolean) => {
    const isVideo = task.media === 'VIDEO';
    void (async () => {
      for (const url of urls) {
        let head: Buffer;
        try {
          head = await download(url, isVideo ? MAX_VIDEO_BYTES : MAX_PHOTO_BYTES);
        } catch (err) {
          ctx.logger.info({ shareId: task.shareId, err: (err as Error).message }, 'sandbox media download failed');
          return fail(task, isVideo ? 'video_pull_failed' : 'photo_pull_failed');
        }
        if (!(await acceptedFormat(task.media, head))) return fail(task, 'file_format_check_failed');
      }
      ctx.clock.after(ctx.settings.publishProcessingMs, () => finish(task, caption, draft));
    })();
  };

  const start = (openId: string, media: 'VIDEO' | 'PHOTO'): PublishTask => {
    const task: PublishTask = { shareId: shareId(media === 'VIDEO' ? 'v' : 'p'), openId, media, status: 'PROCESSING_DOWNLOAD' };
    tasks.set(task.shareId, task);
    return task;
  };

  const brandFlags = (body: Params) => {
    // Required by the official field list (both are booleans, "Paid partnership" wins when both are true).
    if (body.boolean('post_info.is_brand_organic') === undefined) throw BUSINESS.missing('post_info.is_brand_organic');
    if (body.boolean('post_info.is_branded_content') === undefined) throw BUSINESS.missing('post_info.is_branded_content');
  };

  officialRoute(app, ctx, 'business', 'POST', '/open_api/v1.3/business/video/publish/', (call) => {
    const account = requireOwnBusiness(call, 'body');
    const { body } = call;
    const videoUrl = body.requiredString('video_url', { max: 2048 });
    checkMediaUrl('video_url', videoUrl);
    if (!body.object('post_info')) throw BUSINESS.missing('post_info');
    const draft = body.boolean('post_info.upload_to_draft') ?? false;
    const caption = body.string('post_info.caption') ?? '';
    if (caption.length > 2200) throw BUSINESS.invalid('post_info.caption', 'Length must be at most 2200.');
    if (mentionCount(caption) > 30) throw BUSINESS.invalid('post_info.caption', 'At most 30 mentions are allowed.');
    if (!draft) brandFlags(body);
    for (const flag of ['disable_comment', 'disable_duet', 'disable_stitch', 'is_ai_generated', 'is_ads_only'])
      body.boolean(`post_info.${flag}`);
    body.integer('post_info.thumbnail_offset', { min: 0 });
    const customThumbnail = body.string('custom_thumbnail_url', { max: 2048 });
    if (customThumbnail) checkMediaUrl('custom_thumbnail_url', customThumbnail);
    if (body.has('post_info.location_id') && !body.has('post_info.location_name')) throw BUSINESS.missing('post_info.location_name');
    const music = body.object('post_info.music_sound_info');
    if (music) {
      body.requiredString('post_info.music_sound_info.music_sound_id');
      body.integer('post_info.music_sound_info.music_sound_volume', { min: 0, max: 100 });
      body.integer('post_info.music_sound_info.video_original_sound_volume', { min: 0, max: 100 });
    }
    const task = start(account.openId, 'VIDEO');
    play(task, [videoUrl], caption, draft);
    return { share_id: task.shareId };
  });

  officialRoute(app, ctx, 'business', 'POST', '/open_api/v1.3/business/photo/publish/', (call) => {
    const account = requireOwnBusiness(call, 'body');
    const { body } = call;
    const images = body.stringArray('photo_images');
    if (!images || images.length === 0) throw BUSINESS.missing('photo_images');
    if (images.length > 35) throw BUSINESS.invalid('photo_images', 'At most 35 images are allowed.');
    images.forEach((url, i) => checkMediaUrl(`photo_images[${i}]`, url));
    const cover = body.integer('photo_cover_index', { min: 0 }) ?? 0;
    if (cover >= images.length) throw BUSINESS.invalid('photo_cover_index', 'Must point at one of photo_images.');
    if (!body.object('post_info')) throw BUSINESS.missing('post_info');
    const draft = body.boolean('post_info.is_draft') ?? false;
    const privacy = body.requiredString('post_info.privacy_level', { oneOf: PRIVACY_LEVELS });
    if (!privacyOptions(account).includes(privacy))
      throw BUSINESS.invalid('post_info.privacy_level', 'Not available for this account; see video/settings.');
    const title = body.string('post_info.title') ?? '';
    if (title.length > 90) throw BUSINESS.invalid('post_info.title', 'Length must be at most 90.');
    const caption = body.string('post_info.caption') ?? '';
    if (caption.length > 4000) throw BUSINESS.invalid('post_info.caption', 'Length must be at most 4000.');
    if (mentionCount(caption) > 30) throw BUSINESS.invalid('post_info.caption', 'At most 30 mentions are allowed.');
    if (!draft) brandFlags(body);
    body.boolean('post_info.auto_add_music');
    body.boolean('post_info.disable_comment');
    const task = start(account.openId, 'PHOTO');
    play(task, images, caption || title, draft);
    return { share_id: task.shareId };
  });

  officialRoute(app, ctx, 'business', 'GET', '/open_api/v1.3/business/publish/status/', (call) => {
    const account = requireOwnBusiness(call, 'query');
    const publishId = call.query.requiredString('publish_id');
    const task = tasks.get(publishId);
    if (!task || task.openId !== account.openId) throw new OfficialError(40007, 'The publish_id does not exist.');
    const postIds =
      task.postId && task.postIdVisibleAt !== undefined && ctx.clock.now() >= task.postIdVisibleAt ? [task.postId] : undefined;
    return { status: task.status, ...(postIds ? { post_ids: postIds } : {}), ...(task.status === 'FAILED' ? { reason: task.reason } : {}) };
  });

  officialRoute(app, ctx, 'business', 'GET', '/open_api/v1.3/business/video/settings/', (call) => {
    const account = requireOwnBusiness(call, 'query');
    return {
      privacy_level_options: privacyOptions(account),
      comment_disabled: false,
      duet_disabled: false,
      stitch_disabled: false,
      max_video_post_duration_sec: 600,
    };
  });

  officialRoute(app, ctx, 'business', 'GET', '/open_api/v1.3/business/hashtag/suggestion/', (call) => {
    requireOwnBusiness(call, 'query');
    const keyword = call.query.requiredString('keyword', { max: 100 }).replace(/^#/, '');
    call.query.string('language', { max: 10 });
    const base = keyword.toLowerCase().replace(/\s+/g, '');
    if (!/^[\p{L}\p{N}_]+$/u.test(base)) return { suggestions: [{ name: keyword, view_count: 0 }] };
    const [exact, ...rest] = HASHTAG_SUFFIXES.map((suffix) => ({
      name: `${base}${suffix}`,
      view_count: stableNumber(`${base}${suffix}`, 5_000_000_000),
    }));
    return { suggestions: [exact!, ...rest.sort((a, b) => b.view_count - a.view_count)] };
  });

  officialRoute(app, ctx, 'business', 'GET', '/open_api/v1.3/business/publish/location/', (call) => {
    requireOwnBusiness(call, 'query');
    const search = call.query.requiredString('search_query', { max: 100 }).toLowerCase();
    const locations = LOCATIONS.filter(([name, address]) => name.toLowerCase().includes(search) || address.toLowerCase().includes(search))
      .slice(0, 20)
      .map(([name, address]) => ({
        location_name: name,
        location_id: String(6_000_000_000 + stableNumber(name, 999_999_999)),
        location_address: address,
      }));
    return { locations };
  });
}
