/**
 * Posts on the platform, per account: seeded ones so that lists and insights have data from the
 * start, and the ones publishing creates. Comments hang off posts by `item_id` (the comment APIs'
 * `video_id`), and video/list reads them with their metrics.
 */
import { createHash } from 'node:crypto';

export interface Post {
  itemId: string;
  openId: string;
  mediaType: 'VIDEO' | 'PHOTO';
  caption: string;
  /** Unix seconds. */
  createTime: number;
  durationSeconds: number;
  /** Shop-track videos carry their product link. */
  productId?: string;
}

/** A stable pseudo-random integer in [0, range) from a seed text: metrics that do not jump between calls. */
export function stableNumber(seed: string, range: number): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) % range;
}

let lastK = 0;

/**
 * Post ids are 19-digit numbers, as the platform's are, and webhooks carry them as JSON numbers.
 * 7·10^18 + k·128000 is exact as a double and prints digit for digit (see comment-store.ts), so
 * a receiver reads exactly the id the REST API shows.
 */
function exactId(k: number): string {
  return (7_000_000_000_000_000_000n + BigInt(k) * 128_000n).toString();
}

/** Unique and increasing; k stays below the 2^63 limit (about 1.7·10^13) until the year 2200. */
export function newItemId(nowMs: number): string {
  lastK = Math.max(lastK + 1, nowMs * 2);
  return exactId(lastK);
}

export class PostStore {
  private readonly byAccount = new Map<string, Post[]>();

  constructor(private readonly now: () => number) {}

  /** Every account starts with a few posts published over the past weeks. */
  private seeded(openId: string): Post[] {
    let posts = this.byAccount.get(openId);
    if (!posts) {
      const now = this.now();
      posts = [0, 1, 2].map((i) => ({
        itemId: exactId(stableNumber(`${openId}:${i}`, 1e9) * 4 + i),
        openId,
        mediaType: 'VIDEO' as const,
        caption: `Sandbox post ${i + 1} #sandbox`,
        createTime: Math.floor((now - (i + 1) * 5 * 86_400_000) / 1000),
        durationSeconds: 15 + stableNumber(`${openId}:${i}:d`, 45),
      }));
      this.byAccount.set(openId, posts);
    }
    return posts;
  }

  add(post: Omit<Post, 'itemId'> & { itemId?: string }): Post {
    const full: Post = { ...post, itemId: post.itemId ?? newItemId(this.now()) };
    this.seeded(post.openId).unshift(full);
    return full;
  }

  list(openId: string): Post[] {
    return [...this.seeded(openId)].sort((a, b) => b.createTime - a.createTime);
  }

  get(openId: string, itemId: string): Post | undefined {
    return this.seeded(openId).find((p) => p.itemId === itemId);
  }
}
