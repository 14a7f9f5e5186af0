/**
 * The shop platform's creator content endpoints (official-api.md 8.3 a, c, d, f, g, h, i, k, l),
 * behind the common shop checks that officialRoute applies (app_key, timestamp, sign, no
 * shop_cipher, x-tts-access-token). Parameter errors answer 36009004 naming the field; the
 * content codes come from errors.ts. Not emulated: the large-file upload flow (b), showcase
 * products (e), photo posts (j) and the older 202505 post (i'); their paths answer 36009009.
 *
 * Order of checks on precheck: parameters, daily precheck quota, anchor title, file, product.
 * On post: parameters, anchor title, file, product, cover, music, daily posting quota. Only an
 * accepted post consumes its file id.
 */
import type { FastifyInstance } from 'fastify';
import { officialRoute, type SandboxContext } from '../context';
import { SHOP } from '../official-error';
import { stableNumber } from '../posts';
import { checkAnchorTitle } from './anchor';
import { assetUrl, registerShopAssets } from './assets';
import { registerShopControl } from './control';
import { CREATOR } from './errors';
import { imageInfo, VIDEO_FORMATS, videoFormat } from '../../core/media/formats';
import { aspectAllowed, readUpload } from './media';
import { MUSIC_PAGE_SIZE } from './music';
import { shopState } from './state';

export const SHOP_PATHS = {
  videoFiles: '/affiliate_creator/202505/videos/video_files',
  photoFiles: '/affiliate_creator/202511/photos/photo_files',
  products: '/affiliate_creator/202509/shop_products',
  music: '/affiliate_creator/202602/music/search',
  precheck: '/affiliate_creator/202511/videos/precheck_task',
  precheckResult: '/affiliate_creator/202601/videos/precheck_tasks/:task_id',
  videos: '/affiliate_creator/202607/videos',
  videoStatus: '/affiliate_creator/202509/videos/:video_id/status',
  profile: '/affiliate_creator/202508/profiles',
} as const;

const MB = 1024 * 1024;
const VIDEO_MAX_BYTES = 100 * MB;
const PHOTO_MAX_BYTES = 10 * MB;
/** Enough for every container signature, the MPEG-TS one included (two 188-byte packets). */
const VIDEO_HEAD_BYTES = 4096;
const CAPTION_MAX_UTF16 = 4000;
/** The longest shoppable video the emulator assumes: a cover frame beyond it cannot exist. */
const COVER_TIMESTAMP_MAX_MS = 10 * 60_000;

const REGION = /^[A-Za-z]{2}$/;
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

function pathParam(params: unknown, name: string): string {
  const value = (params as Record<string, string | undefined>)[name];
  if (!value) throw SHOP.missing(name);
  return value;
}

export function registerShop(app: FastifyInstance, ctx: SandboxContext): void {
  const state = shopState(ctx);
  registerShopAssets(app);
  registerShopControl(app, ctx);

  officialRoute(app, ctx, 'shop', 'POST', SHOP_PATHS.videoFiles, async ({ request, account }) => {
    const upload = await readUpload(request, { maxBytes: VIDEO_MAX_BYTES, keepBytes: VIDEO_HEAD_BYTES, what: 'video' });
    const format = await videoFormat(upload.head);
    if (!format) throw SHOP.invalid('data', `is not a supported video format (${VIDEO_FORMATS.join(', ')})`);
    const file = state.files.addVideo({ openId: account.openId, md5: upload.md5, size: upload.size, format });
    return { video_file: { id: file.id, md5: file.md5 } };
  });

  officialRoute(app, ctx, 'shop', 'POST', SHOP_PATHS.photoFiles, async ({ request, account }) => {
    const upload = await readUpload(request, { maxBytes: PHOTO_MAX_BYTES, keepBytes: PHOTO_MAX_BYTES, what: 'photo' });
    const info = await imageInfo(upload.head);
    if (!info) throw SHOP.invalid('data', 'is not a supported image format (JPG, JPEG, PNG, WEBP, HEIC, BMP)');
    if (!info.size) throw SHOP.invalid('data', `is not a readable ${info.format} image`);
    if (!aspectAllowed(info.size.width, info.size.height)) {
      throw SHOP.invalid('data', `has an aspect ratio of ${info.size.width}:${info.size.height}, outside 9:16 to 16:9`);
    }
    const photo = state.files.addPhoto({ openId: account.openId, format: info.format, ...info.size });
    return { photo_file: { photo_uri: photo.uri } };
  });

  officialRoute(app, ctx, 'shop', 'GET', SHOP_PATHS.products, ({ query, account }) => {
    const pageSize = query.integer('page_size', { min: 1, max: 100 });
    if (pageSize === undefined) throw SHOP.missing('page_size');
    return state.catalog.list(account.openId, {
      pageSize,
      pageToken: query.string('page_token'),
      titleKeyword: query.string('title_keyword'),
      sortField: query.string('sort_field'),
      sortOrder: query.string('sort_order'),
    });
  });

  officialRoute(app, ctx, 'shop', 'GET', SHOP_PATHS.music, ({ query, account }) => {
    const region = query.string('region');
    if (region !== undefined && !REGION.test(region)) throw SHOP.invalid('region', 'must be an ISO 3166-1 alpha-2 code');
    const language = query.string('language');
    if (language !== undefined && !LANGUAGE.test(language)) throw SHOP.invalid('language', 'must be a BCP 47 language tag');
    return state.music.search(account.openId, {
      keyword: query.requiredString('keyword'),
      searchId: query.string('search_id'),
      pageToken: query.string('page_token'),
      pageSize: query.integer('page_size', { min: MUSIC_PAGE_SIZE.min, max: MUSIC_PAGE_SIZE.max }),
    });
  });

  officialRoute(app, ctx, 'shop', 'POST', SHOP_PATHS.precheck, ({ body, account }) => {
    const fileId = body.requiredString('video_info.file_id');
    const productId = body.requiredString('product_link_info.product_id');
    const title = body.requiredString('product_link_info.title');
    state.prechecks.checkQuota(account.openId);
    checkAnchorTitle(title);
    state.files.usableVideo(account.openId, fileId);
    state.catalog.linkable(account.openId, productId);
    const task = state.prechecks.submit(account.openId, { fileId, productId, title });
    return { precheck: { task_id: task.id } };
  });

  officialRoute(app, ctx, 'shop', 'GET', SHOP_PATHS.precheckResult, ({ request, account }) => ({
    precheck_task: state.prechecks.result(account.openId, pathParam(request.params, 'task_id')),
  }));

  officialRoute(app, ctx, 'shop', 'POST', SHOP_PATHS.videos, ({ body, account }) => {
    const fileId = body.requiredString('video_info.file_id');
    const caption = body.requiredString('video_info.title', { max: CAPTION_MAX_UTF16 });
    const coverUri = body.string('video_info.cover_uri');
    const coverTimestampMs = body.integer('video_info.cover_timestamp_ms');
    const musicId = body.string('video_info.music_id');
    body.boolean('video_info.is_ai_generated');
    const productId = body.requiredString('product_link_info.product_id');
    const anchorTitle = body.requiredString('product_link_info.title');

    checkAnchorTitle(anchorTitle);
    const file = state.files.usableVideo(account.openId, fileId);
    state.catalog.linkable(account.openId, productId);
    // The docs: cover_uri wins when both are sent, so the timestamp is then not looked at.
    if (coverUri !== undefined) {
      if (!state.files.ownPhoto(account.openId, coverUri))
        throw SHOP.invalid('video_info.cover_uri', 'does not name a photo uploaded by this creator');
    } else if (coverTimestampMs !== undefined && (coverTimestampMs < 0 || coverTimestampMs > COVER_TIMESTAMP_MAX_MS)) {
      throw CREATOR.coverTimestamp();
    }
    if (musicId !== undefined && !state.music.track(musicId)) throw SHOP.invalid('video_info.music_id', 'does not exist');

    state.videos.checkQuota(account.openId);
    // Taken only once the post is accepted, so a refused post leaves the queued outcome in place.
    const chosen = ctx.outcomes.next(account.openId);
    const video = state.videos.create(account.openId, { productId, caption, outcome: chosen?.kind === 'failed' ? 'FAIL' : 'SUCCESS' });
    state.files.consume(file, video.id);
    return { video: { id: video.id }, quota: video.quota };
  });

  officialRoute(app, ctx, 'shop', 'GET', SHOP_PATHS.videoStatus, ({ request, account }) => ({
    video: state.videos.status(account.openId, pathParam(request.params, 'video_id')),
  }));

  officialRoute(app, ctx, 'shop', 'GET', SHOP_PATHS.profile, ({ account }) => ({
    avatar: { url: assetUrl(ctx, 'avatars', `${stableNumber(account.openId, 1e9)}.svg`), width: 100, height: 100 },
    username: account.username,
    selection_region: 'US',
    register_region: 'US',
    permissions: ['ADD_AFFILIATE_PERMISSION', 'PHOTO_SHOPPABLE_PERMISSION_PRODUCT'],
    user_type: 'TIKTOK_SHOP_CREATOR',
    creator_user_open_id: account.openId,
  }));
}
