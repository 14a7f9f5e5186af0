/**
 * A shop track account's videos, as business/video/list answers them for a creatorUserOpenId.
 *
 * The shop API offers no list or search of a creator's videos (official-api.md 8.3: a video is
 * posted, then read by its id alone, and no other endpoint returns videos). So which videos exist
 * comes from our own records: the account's shop publish records that reached the shop (they hold
 * its video id), selected by title and publish time here. What each video is now comes from the
 * shop: every video of a page is read back with the per-video status call, which gives its status
 * and post time and brings its record up to date, as the shop status query does. The shop gives
 * no metrics, so none are shown.
 */
import type { PublishRecordRow } from '../db/repositories/publish-records';
import { listShopVideoRecords } from '../db/repositories/publish-records';
import { titleMatches } from '../engagement/insight-rules';
import type { Logger } from '../logger';
import { readShopVideo, type PublishRecordDeps } from '../publishing/records';
import { UpstreamError } from '../upstream/failures';

export interface ShopVideoQuery {
  customerId: string;
  accountId: string;
  title?: string;
  from?: Date;
  to?: Date;
  /** The record id of the previous page's last video. */
  before?: string;
  limit: number;
}

/** One video in the answer; the video track's items carry no `track`. */
export interface ShopVideoItem {
  track: 'shop';
  /** The official video id: the shareId of the record, the input of GET /v1/publish/tts/status. */
  videoId: string;
  title: string;
  status: string;
  /** The shop's post_status; null when the shop no longer knows the video as the creator's. */
  officialStatus: string | null;
  /** The shop's post_time, unix seconds, once the post succeeded. */
  postTime: number | null;
  /** When the service accepted the publish (the record's createdAt): what from and to select on. */
  publishedAt: string;
  recordId: string;
}

export interface ShopVideoPage {
  items: ShopVideoItem[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** Records read per query while a title filter looks for matches: the title is compared here, not in SQL. */
const SCAN_BATCH = 200;
/** Status reads in flight at once for one page, to stay clear of the shop's rate limit. */
const READS_AT_ONCE = 5;

type ShopRecord = PublishRecordRow & { shareId: string };

const titleOf = (record: PublishRecordRow): string => {
  const info = record.request.video_info as { title?: unknown } | undefined;
  return typeof info?.title === 'string' ? info.title : '';
};

/**
 * The records of one page, and whether more follow. Without a title the database pages; with one,
 * records are read in batches and matched here, because the match folds case by Unicode's rules,
 * which the database's lower() does only under some collations.
 */
async function pageOfRecords(db: PublishRecordDeps['db'], q: ShopVideoQuery): Promise<{ page: ShopRecord[]; hasMore: boolean }> {
  const { title, ...range } = q;
  if (!title) {
    const rows = (await listShopVideoRecords(db, { ...range, limit: q.limit + 1 })) as ShopRecord[];
    return { page: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
  }
  const matches: ShopRecord[] = [];
  let before = q.before;
  for (;;) {
    const rows = (await listShopVideoRecords(db, { ...range, before, limit: SCAN_BATCH })) as ShopRecord[];
    matches.push(...rows.filter((r) => titleMatches(titleOf(r), title)));
    if (matches.length > q.limit || rows.length < SCAN_BATCH) break;
    before = rows[rows.length - 1]!.id;
  }
  return { page: matches.slice(0, q.limit), hasMore: matches.length > q.limit };
}

async function mapAtMost<T, R>(items: readonly T[], atOnce: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
  return out;
}

export async function listShopVideos(
  deps: PublishRecordDeps & { logger: Logger },
  accessToken: string,
  q: ShopVideoQuery,
): Promise<ShopVideoPage> {
  const { page, hasMore } = await pageOfRecords(deps.db, q);
  const items = await mapAtMost(page, READS_AT_ONCE, async (seen): Promise<ShopVideoItem> => {
    let record: PublishRecordRow = seen;
    let video: { post_status: string; post_time?: number } | undefined;
    try {
      ({ record, video } = await readShopVideo(deps, seen, accessToken));
    } catch (err) {
      // 170001016: the shop does not know the video as this creator's (anymore). That concerns this
      // video alone, so the page still answers with what the record knows; any other failure
      // (token, rate limit, outage) concerns every video and fails the request.
      if (!(err instanceof UpstreamError && err.failureClass === 'not_found')) throw err;
      deps.logger.warn({ err, recordId: seen.id, videoId: seen.shareId }, 'shop video list: the shop does not know a recorded video');
    }
    return {
      track: 'shop',
      videoId: seen.shareId,
      title: titleOf(seen),
      status: record.status,
      officialStatus: video?.post_status ?? null,
      postTime: video?.post_time ?? null,
      publishedAt: seen.createdAt.toISOString(),
      recordId: seen.id,
    };
  });
  return { items, nextCursor: hasMore ? page[page.length - 1]!.id : null, hasMore };
}
