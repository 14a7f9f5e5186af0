/**
 * Shoppable video posts (Post 202607) and their status (202509).
 *
 * A post is PROCESSING for `publishProcessingMs` of virtual time, then SUCCESS or FAIL as the
 * control API's outcome queue chose when the post was accepted (`failed` → FAIL; `complete`,
 * `draft` and no choice → SUCCESS: the shop has no draft inbox). A successful post also becomes a
 * post of the creator's account, carrying its product id, with an item id of its own: the shop
 * video id is not the item id. The shop documents no list or search of a creator's videos, so
 * none is emulated: a video is read by its id alone (status), and the service finds a shop
 * account's videos by title or time in its own publish records.
 *
 * Posting quota: the docs leave the number open ("3/day" in an example); the emulator allows 20
 * accepted posts per creator per UTC day, reports `quota` as "<used>/20 per day", and refuses the
 * 21st with 170001062 whose message carries the quota, as the docs describe.
 */
import { newItemId, stableNumber, type Post } from '../posts';
import { CREATOR } from './errors';

export const POST_DAILY_LIMIT = 20;

export type PostStatus = 'PROCESSING' | 'SUCCESS' | 'FAIL';

interface ShopVideo {
  id: string;
  openId: string;
  productId: string;
  caption: string;
  readyAt: number;
  outcome: 'SUCCESS' | 'FAIL';
  settled: boolean;
}

export interface VideoDeps {
  now: () => number;
  processingMs: () => number;
  after: (ms: number, fire: () => void) => void;
  addPost: (post: Omit<Post, 'itemId'>) => void;
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class ShopVideos {
  private readonly videos = new Map<string, ShopVideo>();
  private readonly daily = new Map<string, { day: string; count: number }>();

  constructor(private readonly deps: VideoDeps) {}

  private usedToday(openId: string): number {
    const entry = this.daily.get(openId);
    return entry?.day === utcDay(this.deps.now()) ? entry.count : 0;
  }

  checkQuota(openId: string): void {
    const used = this.usedToday(openId);
    if (used >= POST_DAILY_LIMIT) throw CREATOR.postingQuota(`${used}/${POST_DAILY_LIMIT} per day`);
  }

  /** Accepts a post whose inputs were checked; returns its id and the quota text. */
  create(openId: string, input: { productId: string; caption: string; outcome: 'SUCCESS' | 'FAIL' }): { id: string; quota: string } {
    this.checkQuota(openId);
    const used = this.usedToday(openId) + 1;
    this.daily.set(openId, { day: utcDay(this.deps.now()), count: used });
    const processing = this.deps.processingMs();
    const video: ShopVideo = { ...input, id: newItemId(this.deps.now()), openId, readyAt: this.deps.now() + processing, settled: false };
    this.videos.set(video.id, video);
    this.deps.after(processing, () => this.settle(video));
    return { id: video.id, quota: `${used}/${POST_DAILY_LIMIT} per day` };
  }

  /** Unknown ids and other creators' videos both answer 170001016: a creator sees only its own. */
  status(openId: string, videoId: string): { id: string; post_status: PostStatus; post_time?: number } {
    const video = this.videos.get(videoId);
    if (!video || video.openId !== openId) throw CREATOR.notCreatorsVideo();
    if (this.deps.now() < video.readyAt) return { id: video.id, post_status: 'PROCESSING' };
    this.settle(video);
    return video.outcome === 'SUCCESS'
      ? { id: video.id, post_status: 'SUCCESS', post_time: Math.floor(video.readyAt / 1000) }
      : { id: video.id, post_status: 'FAIL' };
  }

  /** Runs once, from the clock's timer or from the first status read after `readyAt`, whichever comes first. */
  private settle(video: ShopVideo): void {
    if (video.settled) return;
    video.settled = true;
    if (video.outcome !== 'SUCCESS') return;
    this.deps.addPost({
      openId: video.openId,
      mediaType: 'VIDEO',
      caption: video.caption,
      createTime: Math.floor(video.readyAt / 1000),
      durationSeconds: 15 + stableNumber(`${video.id}:d`, 45),
      productId: video.productId,
    });
  }
}
