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

let sequence = 0;

/** Post ids are 19-digit numbers, as the platform's are. */
export function newItemId(nowMs: number): string {
  sequence = (sequence + 1) % 100_000;
  return `7${String(nowMs).padStart(13, '0').slice(-13)}${String(sequence).padStart(5, '0')}`;
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
        itemId: `7${String(stableNumber(`${openId}:${i}`, 1e9)).padStart(9, '0')}${String(i).padStart(9, '0')}`,
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
