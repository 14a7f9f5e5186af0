import { InsightService } from '../../../gen/vps/engagement/v1/insight_pb';
import { deprecated, okEnvelope } from '../../schemas/common';
import {
  AccountInsightsJson,
  AccountInsightsQuery,
  AccountQuery,
  BenchmarkJson,
  BenchmarkQuery,
  LegacyPostStatsQuery,
  VideoInsightsJson,
  VideoInsightsQuery,
  VideoSettingsJson,
} from '../../schemas/insights';
import { defineRoute, type RpcRoute } from '../../rpc-route';
import { BUSINESS } from './paths';

/** A comma list from one query value; empty entries are kept, for core to refuse by name. */
const commaList = (value: string | undefined): string[] => (value === undefined ? [] : value.split(',').map((s) => s.trim()));

const videoListSchema = { response: { 200: okEnvelope(VideoInsightsJson) } };

/** The insight routes under /v1/vplat/v1.3/business/. */
export const insightRoutes: RpcRoute[] = [
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/get`,
    summary: 'Account overview; the daily series (metrics) only with startDate and endDate',
    rpc: InsightService.method.getAccountInsights,
    schema: { querystring: AccountInsightsQuery, response: { 200: okEnvelope(AccountInsightsJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { account: q.account, fields: commaList(q.fields), startDate: q.startDate ?? '', endDate: q.endDate ?? '' };
    },
    toData: (res) => res.data ?? {},
  }),
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/video/list`,
    summary:
      "The account's posts with their metrics, newest first; filter videoIds=<postId>,…; for a shop track account, its shop videos by title, from and to",
    rpc: InsightService.method.listVideoInsights,
    schema: { querystring: VideoInsightsQuery, ...videoListSchema },
    toRequest: (req) => {
      const q = req.query;
      return {
        channel: 'v1.3',
        account: q.account,
        fields: commaList(q.fields),
        videoIds: commaList(q.videoIds),
        cursor: q.cursor ?? '',
        maxCount: q.maxCount,
        title: q.title ?? '',
        from: q.from ?? '',
        to: q.to ?? '',
      };
    },
    toData: (res) => res.data ?? {},
  }),
  defineRoute({
    method: 'GET',
    url: '/publish/stats',
    summary: 'Deprecated (removal in 1.6.x): use GET /v1/vplat/v1.3/business/video/list?account=…&videoIds=<postId>',
    rpc: InsightService.method.listVideoInsights,
    schema: deprecated({ querystring: LegacyPostStatsQuery, ...videoListSchema }),
    toRequest: (req) => {
      const q = req.query;
      return { channel: 'legacy', account: q.account ?? '', videoIds: [q.itemId] };
    },
    toData: (res) => res.data ?? {},
  }),
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/benchmark`,
    summary: 'Industry benchmark of one of the official 25 categories',
    rpc: InsightService.method.getBenchmark,
    schema: { querystring: BenchmarkQuery, response: { 200: okEnvelope(BenchmarkJson) } },
    toRequest: (req) => {
      const q = req.query;
      return { account: q.account, category: q.category };
    },
    toData: (res) => res.data ?? {},
  }),
  defineRoute({
    method: 'GET',
    url: `${BUSINESS}/video/settings`,
    summary: 'Privacy levels and longest video the account may publish: a check before publishing',
    rpc: InsightService.method.getVideoSettings,
    schema: { querystring: AccountQuery, response: { 200: okEnvelope(VideoSettingsJson) } },
    toRequest: (req) => ({ account: req.query.account }),
    toData: (res) => res.data ?? {},
  }),
];
