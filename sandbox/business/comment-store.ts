/**
 * Comments on the accounts' posts, in memory per emulator instance: a few third-party comments
 * seeded on each post the first time its comments are touched, those injected through the control
 * API, and the account's own; the images uploaded for comments; and the people who write them.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { SandboxContext } from '../context';
import { stableNumber } from '../posts';

/** Someone who writes comments or messages, identified the way the platform exposes people. */
export interface Person {
  /** The cross-API identifier (`unique_identifier`; a DM participant's `id`). */
  uniqueIdentifier: string;
  /** The deprecated per-app `user_id` of comments. */
  userId: string;
  username: string;
  displayName: string;
}

export interface StoredComment {
  commentId: string;
  videoId: string;
  /** Replies only: the top-level comment answered. Replies to replies hang off the top level, as in the app. */
  parentCommentId?: string;
  author: Person;
  /** Written by the account that owns the post. */
  owner: boolean;
  text: string;
  imageUrl?: string;
  /** Unix seconds. */
  createTime: number;
  likes: number;
  /** Liked by the account that owns the post. */
  liked: boolean;
  hidden: boolean;
  deleted: boolean;
}

export interface CommentImage {
  imageUri: string;
  width: number;
  height: number;
  bytes: Buffer;
  contentType: string;
}

/**
 * Comment ids are 19-digit numbers as on the platform, and `comment.update` carries them as JSON
 * numbers. WebhookPusher.push encodes content with JSON.stringify, which keeps only a double's
 * ~16 significant digits (Node 20 has no JSON.rawJSON), so an arbitrary 19-digit id would arrive
 * rounded. Ids here are 7·10^18 + k·128000: below 2^63 every such number is a multiple of 1024,
 * hence exact as a double, and has at most 16 significant digits, so JSON.stringify prints it
 * digit for digit. A receiver reads exactly the REST id whether or not it parses big numbers with
 * care; the caveat is that a receiver which loses precision on the platform's arbitrary ids is not
 * caught here.
 */
const ID_BASE = 7_000_000_000_000_000_000n;
const ID_STEP = 128_000n;

/** Person identifiers derived from a seed, so the same person keeps them across calls and APIs. */
export function personFrom(seed: string, username: string, displayName = username): Person {
  return {
    uniqueIdentifier: createHash('sha384').update(`uid:${seed}`).digest('base64'),
    userId: createHash('sha256').update(`user:${seed}`).digest('hex'),
    username,
    displayName,
  };
}

/** Where the emulator serves a placeholder picture: avatars and thumbnails, as temporary URLs. */
export function pictureUrl(ctx: SandboxContext, seed: string, validForMs = 86_400_000): string {
  const name = createHash('sha256').update(seed).digest('hex').slice(0, 24);
  return `${ctx.baseUrl()}/_sandbox/cdn/picture/${name}.png?x-expires=${Math.floor((ctx.clock.now() + validForMs) / 1000)}`;
}

const SEED_COMMENTS = [
  { username: 'sandbox_fan_01', displayName: 'Sandbox Fan', text: 'Love this one! 🔥' },
  { username: 'curious_viewer', displayName: 'Curious Viewer', text: 'Where can I get this?' },
] as const;
const SEED_REPLY = { username: 'helpful_friend', displayName: 'Helpful Friend', text: 'Check the link in the bio 👀' } as const;

interface AccountComments {
  byVideo: Map<string, StoredComment[]>;
  byId: Map<string, StoredComment>;
  images: Map<string, CommentImage>;
}

export class CommentStore {
  private readonly accounts = new Map<string, AccountComments>();
  private lastK = 0;

  constructor(private readonly ctx: SandboxContext) {}

  private nextId(): string {
    this.lastK = Math.max(this.lastK + 1, Math.floor(this.ctx.clock.now()) * 2);
    return (ID_BASE + BigInt(this.lastK) * ID_STEP).toString();
  }

  private state(openId: string): AccountComments {
    let state = this.accounts.get(openId);
    if (!state) {
      state = { byVideo: new Map(), byId: new Map(), images: new Map() };
      this.accounts.set(openId, state);
    }
    return state;
  }

  /** Every comment on a post of the account, deleted ones included; undefined when the post is not the account's. */
  thread(openId: string, videoId: string): StoredComment[] | undefined {
    const post = this.ctx.posts.get(openId, videoId);
    if (!post) return undefined;
    const state = this.state(openId);
    let thread = state.byVideo.get(videoId);
    if (!thread) {
      thread = [];
      state.byVideo.set(videoId, thread);
      this.seed(openId, videoId, post.createTime, thread);
    }
    return thread;
  }

  private seed(openId: string, videoId: string, postTime: number, thread: StoredComment[]): void {
    const now = Math.floor(this.ctx.clock.now() / 1000);
    // Seeds fall between the post's publication and now, a few hours apart at most.
    const at = (n: number) => Math.min(now, postTime + 60 + stableNumber(`${videoId}:${n}:t`, 6 * 3600));
    const first = SEED_COMMENTS.map((s, n) =>
      this.insert(openId, thread, {
        videoId,
        author: personFrom(s.username, s.username, s.displayName),
        owner: false,
        text: s.text,
        createTime: at(n),
        likes: stableNumber(`${videoId}:${n}:likes`, 40),
      }),
    )[0]!;
    this.insert(openId, thread, {
      videoId,
      parentCommentId: first.commentId,
      author: personFrom(SEED_REPLY.username, SEED_REPLY.username, SEED_REPLY.displayName),
      owner: false,
      text: SEED_REPLY.text,
      createTime: Math.min(now, first.createTime + 600),
      likes: stableNumber(`${videoId}:reply:likes`, 10),
    });
  }

  private insert(
    openId: string,
    thread: StoredComment[],
    input: Omit<StoredComment, 'commentId' | 'liked' | 'hidden' | 'deleted' | 'likes'> & { likes?: number },
  ): StoredComment {
    const comment: StoredComment = { likes: 0, ...input, commentId: this.nextId(), liked: false, hidden: false, deleted: false };
    thread.push(comment);
    this.state(openId).byId.set(comment.commentId, comment);
    return comment;
  }

  /** A new comment or reply on a post of the account; the caller has checked the post and parent. */
  add(
    openId: string,
    input: { videoId: string; parentCommentId?: string; author: Person; owner: boolean; text: string; imageUrl?: string },
  ): StoredComment {
    const thread = this.thread(openId, input.videoId);
    if (!thread) throw new Error(`post ${input.videoId} of ${openId} vanished`);
    return this.insert(openId, thread, { ...input, createTime: Math.floor(this.ctx.clock.now() / 1000) });
  }

  /** A comment the account can see, by id; deleted ones are gone. */
  find(openId: string, commentId: string): StoredComment | undefined {
    const comment = this.state(openId).byId.get(commentId);
    return comment && !comment.deleted ? comment : undefined;
  }

  replies(openId: string, comment: StoredComment): StoredComment[] {
    return (this.thread(openId, comment.videoId) ?? []).filter((c) => c.parentCommentId === comment.commentId && !c.deleted);
  }

  /** Live comments and replies on a post, for the post's comment count. */
  count(openId: string, videoId: string): number {
    return (this.thread(openId, videoId) ?? []).filter((c) => !c.deleted).length;
  }

  saveImage(openId: string, image: Omit<CommentImage, 'imageUri'>): CommentImage {
    const saved = { ...image, imageUri: `tos-sandbox-comment/${randomBytes(12).toString('hex')}` };
    this.state(openId).images.set(saved.imageUri, saved);
    return saved;
  }

  image(openId: string, imageUri: string): CommentImage | undefined {
    return this.state(openId).images.get(imageUri);
  }

  /** Any account's uploaded image: comment image URLs are public and never expire. */
  publicImage(imageUri: string): CommentImage | undefined {
    for (const state of this.accounts.values()) {
      const image = state.images.get(imageUri);
      if (image) return image;
    }
    return undefined;
  }
}

const STORES = new WeakMap<SandboxContext, CommentStore>();

/** The comment store of one emulator instance; insights read comment counts from it too. */
export function commentStoreOf(ctx: SandboxContext): CommentStore {
  let store = STORES.get(ctx);
  if (!store) {
    store = new CommentStore(ctx);
    STORES.set(ctx, store);
  }
  return store;
}
