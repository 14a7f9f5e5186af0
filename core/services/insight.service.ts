import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { JsonObject } from '@bufbuild/protobuf';
import type {
  GetAccountInsightsRequest,
  GetBenchmarkRequest,
  GetVideoSettingsRequest,
  InsightService,
  ListVideoInsightsRequest,
} from '../../gen/vps/engagement/v1/insight_pb';
import { customerOf } from '../context';
import type { SealedBox } from '../crypto/sealed-box';
import type { Db } from '../db/client';
import { findCustomerSeatByAccount, listSeatsOfCustomer } from '../db/repositories/seats';
import { passThrough } from '../engagement/pass-through';
import {
  businessCategory,
  dateRange,
  maxCount,
  postIds,
  resolveFields,
  shopVideoCursor,
  timeRange,
  titleFilter,
  videoCursor,
} from '../engagement/insight-rules';
import { ApiError, invalidField } from '../errors';
import type { EventRecorder } from '../events/recorder';
import type { Logger } from '../logger';
import { bookSeat, seatAccessToken } from '../publishing/seats';
import { listShopVideos } from '../shop/videos';
import type { Upstream } from '../upstream';
import { UpstreamError } from '../upstream/failures';
import {
  ACCOUNT_FIELDS,
  BENCHMARK_FIELDS,
  DAILY_METRIC_FIELDS,
  DAILY_ONLY_FIELDS,
  fromOfficialList,
  REQUESTABLE_ACCOUNT_FIELDS,
  VIDEO_FIELDS,
  VIDEO_LIST_FIELDS,
  VIDEO_SETTINGS_FIELDS,
} from '../upstream/vplat/insight-fields';
import {
  getBenchmark,
  getBusinessAccount,
  listVideos,
  type BusinessField,
  type VideoField,
  type VideoListData,
} from '../upstream/vplat/insights';
import { getVideoSettings } from '../upstream/vplat/publishing';

const officialNames = (table: ReadonlyArray<readonly [string, string]>) => table.map(([, official]) => official);

/** Without `fields`: everything but the daily series, which needs a date range. */
const DEFAULT_ACCOUNT_FIELDS = officialNames(REQUESTABLE_ACCOUNT_FIELDS).filter((f) => !DAILY_ONLY_FIELDS.has(f)) as BusinessField[];
const ALL_ACCOUNT_FIELDS = officialNames(REQUESTABLE_ACCOUNT_FIELDS) as BusinessField[];
/** Without `fields`: every field of a post (the platform's default is item_id alone). */
const ALL_VIDEO_FIELDS = officialNames(VIDEO_FIELDS) as VideoField[];

export class InsightHandlers implements ServiceImpl<typeof InsightService> {
  constructor(readonly deps: { db: Db; sealedBox: SealedBox; upstream: Upstream; events: EventRecorder; logger: Logger }) {}

  async getAccountInsights(req: GetAccountInsightsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const range = dateRange(req.startDate, req.endDate, Date.now());
    const asked = resolveFields(req.fields, REQUESTABLE_ACCOUNT_FIELDS) as BusinessField[] | undefined;
    const daily = asked?.find((f) => DAILY_ONLY_FIELDS.has(f));
    // The spec returns the daily series only for a date range; the platform would fill in its own.
    if (!range && daily) throw invalidField('fields', `${daily} is a daily metric: give startDate and endDate for the daily series`);
    const fields = asked ?? (range ? ALL_ACCOUNT_FIELDS : DEFAULT_ACCOUNT_FIELDS);
    return passThrough(
      this.deps,
      { customerId, account: req.account },
      async (token, seat) => {
        const data = await getBusinessAccount(this.deps.upstream.vplat, token, {
          business_id: seat.accountId,
          fields,
          ...(range ? { start_date: range.start, end_date: range.end } : {}),
        });
        // A plain followers_count does not ask for the series; without a range the platform's own default range is not ours to show.
        if (!range) return { ...data, metrics: undefined };
        return data.metrics ? { ...data, metrics: fromOfficialList(DAILY_METRIC_FIELDS, data.metrics) } : data;
      },
      ACCOUNT_FIELDS,
    );
  }

  async listVideoInsights(req: ListVideoInsightsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const shopFilters = [
      ['title', req.title],
      ['from', req.from],
      ['to', req.to],
    ] as const;
    // A video track seat holding the account answers as it always has; a shop track seat only when
    // none does. An account neither holds is refused as a shop account's when shop filters say
    // that is what the caller meant, and as a video track account's otherwise, as before.
    if (req.channel !== 'legacy' && req.account && !(await findCustomerSeatByAccount(this.deps.db, customerId, req.account, 'video'))) {
      const shop = await findCustomerSeatByAccount(this.deps.db, customerId, req.account, 'shop');
      if (shop || shopFilters.some(([, value]) => value)) return this.listShopVideos(req, customerId);
    }
    for (const [field, value] of shopFilters) {
      if (value)
        throw invalidField(
          field,
          "selects the videos of a shop track account (creatorUserOpenId); a video track account's list is filtered by videoIds",
        );
    }
    const asked = resolveFields(req.fields, VIDEO_FIELDS) as VideoField[] | undefined;
    // The platform refuses other fields without item_id, and a row without its id is of no use.
    const fields: VideoField[] = asked ? [...new Set<VideoField>(['item_id', ...asked])] : ALL_VIDEO_FIELDS;
    const legacy = req.channel === 'legacy';
    const ids = postIds(req.videoIds, legacy ? 'itemId' : 'videoIds');
    const query = {
      fields,
      cursor: videoCursor(req.cursor),
      max_count: maxCount(req.maxCount),
      ...(ids.length > 0 ? { filters: { video_ids: ids } } : {}),
    };
    const list = (account: string) =>
      passThrough(
        this.deps,
        { customerId, account },
        async (token, seat) => {
          const data: VideoListData = await listVideos(this.deps.upstream.vplat, token, { business_id: seat.accountId, ...query });
          return { ...data, videos: fromOfficialList(VIDEO_FIELDS, data.videos), cursor: data.has_more ? String(data.cursor) : null };
        },
        VIDEO_LIST_FIELDS,
      );
    if (req.account) return list(req.account);
    if (!legacy || ids.length !== 1) throw invalidField('account', 'is required');
    return this.findPost(customerId, ids[0]!, list);
  }

  /**
   * A shop track account's videos: the official shop API has no list of them, so they are found in
   * our publish records by title and time and read back from the shop one by one (core/shop/videos.ts).
   * The video track's post filter and field choice do not apply: every shop item has the same fields.
   */
  private async listShopVideos(req: ListVideoInsightsRequest, customerId: string) {
    if (req.videoIds.length > 0)
      throw invalidField(
        'videoIds',
        'filters the posts of a video track account; find a shop video by title, from and to, or read it by GET /v1/publish/tts/status?videoId=',
      );
    if (req.fields.length > 0)
      throw invalidField('fields', "chooses the fields of a video track account's posts; a shop video always has the same fields");
    const title = titleFilter(req.title);
    const range = timeRange(req.from, req.to);
    const before = shopVideoCursor(req.cursor);
    const limit = maxCount(req.maxCount);
    const seat = await bookSeat(this.deps.db, customerId, req.account, 'shop', 'account');
    const page = await listShopVideos(this.deps, seatAccessToken(this.deps.sealedBox, seat), {
      customerId,
      accountId: seat.accountId,
      title,
      ...range,
      before,
      limit,
    });
    return { data: page as unknown as JsonObject };
  }

  /**
   * The deprecated stats route names a post but no account: the caller's video track seats are
   * asked in seat order, and the first whose list holds the post answers. A seat the platform
   * cannot answer for is passed over, but if no seat has the post its failure is the answer, since
   * the post may be on it.
   */
  private async findPost(customerId: string, postId: string, list: (account: string) => Promise<{ data: JsonObject }>) {
    const seats = (await listSeatsOfCustomer(this.deps.db, customerId)).filter(
      (s) => s.track === 'video' && s.accountId && s.credentialsSealed && s.authorizationStatus !== 'reauthorization_required',
    );
    if (seats.length === 0)
      throw new ApiError(1007, 'account: none of your video track seats is bound; bind one first (GET /v1/seats lists them)', {
        data: { field: 'account' },
      });
    let failure: UpstreamError | undefined;
    for (const seat of seats) {
      try {
        const page = await list(seat.accountId!);
        if (Array.isArray(page.data.items) && page.data.items.length > 0) return page;
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        failure ??= err;
      }
    }
    if (failure) throw failure;
    throw new ApiError(1005, `itemId: post ${postId} is not among the posts of your video track accounts`, { data: { field: 'itemId' } });
  }

  async getBenchmark(req: GetBenchmarkRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    const category = businessCategory(req.category);
    return passThrough(
      this.deps,
      { customerId, account: req.account },
      (token, seat) => getBenchmark(this.deps.upstream.vplat, token, { business_id: seat.accountId, business_category: category }),
      BENCHMARK_FIELDS,
    );
  }

  async getVideoSettings(req: GetVideoSettingsRequest, ctx: HandlerContext) {
    const { customerId } = customerOf(ctx);
    return passThrough(
      this.deps,
      { customerId, account: req.account },
      (token, seat) => getVideoSettings(this.deps.upstream.vplat, token, { business_id: seat.accountId }),
      VIDEO_SETTINGS_FIELDS,
    );
  }
}
