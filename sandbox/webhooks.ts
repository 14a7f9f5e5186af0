/**
 * Official-format webhook pushes. The app subscribes per event type (VIDEO, COMMENT,
 * DIRECT_MESSAGE) with business/webhook/update; every change the emulator makes is then POSTed to
 * that callback, signed with the app secret (`TikTok-Signature: t=<s>,s=<hex>` over "<t>.<body>"),
 * and retried with backoff until the receiver answers 200, as the platform does.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'undici';
import type { Logger } from '../core/logger';

export const WEBHOOK_EVENT_TYPES = ['VIDEO', 'COMMENT', 'DIRECT_MESSAGE', 'BRAND_MENTION'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface Subscription {
  eventType: WebhookEventType;
  callbackUrl: string;
  itemList: string[];
}

export interface PushRecord {
  id: string;
  event: string;
  userOpenId: string;
  callbackUrl: string;
  body: string;
  attempts: Array<{ at: string; status: number | null; error?: string }>;
  delivered: boolean;
}

/**
 * What a control route that made a change tells its caller about the push: which one, and where it
 * went; null when nothing is subscribed to the event, so nothing was pushed.
 */
export function pushSummary(push: PushRecord | undefined): { id: string; callbackUrl: string } | null {
  return push ? { id: push.id, callbackUrl: push.callbackUrl } : null;
}

/** Which subscription an official event name falls under. */
export function eventTypeOf(event: string): WebhookEventType {
  if (event.startsWith('post.publish.')) return 'VIDEO';
  if (event === 'comment.update') return 'COMMENT';
  if (event.startsWith('im_')) return 'DIRECT_MESSAGE';
  return 'BRAND_MENTION';
}

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},s=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export class WebhookPusher {
  private readonly subscriptions = new Map<WebhookEventType, Subscription>();
  private readonly pushes: PushRecord[] = [];
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly opts: {
      appId: string;
      appSecret: string;
      /** Real milliseconds between attempts; the platform's own schedule spans 72 hours. */
      retryDelaysMs: number[];
      nowSeconds: () => number;
      logger: Logger;
    },
  ) {}

  subscribe(eventType: WebhookEventType, callbackUrl: string, itemList: string[] = []): Subscription {
    const previous = this.subscriptions.get(eventType);
    // COMMENT item lists merge with the earlier list, as the official update does.
    const merged = eventType === 'COMMENT' ? [...new Set([...(previous?.itemList ?? []), ...itemList])] : [];
    const subscription = { eventType, callbackUrl, itemList: merged };
    this.subscriptions.set(eventType, subscription);
    return subscription;
  }

  subscription(eventType: WebhookEventType): Subscription | undefined {
    return this.subscriptions.get(eventType);
  }

  unsubscribe(eventType: WebhookEventType, itemList?: string[]): void {
    const current = this.subscriptions.get(eventType);
    if (current && eventType === 'COMMENT' && itemList && itemList.length > 0) {
      current.itemList = current.itemList.filter((id) => !itemList.includes(id));
      return;
    }
    this.subscriptions.delete(eventType);
  }

  history(): PushRecord[] {
    return this.pushes.map((p) => ({ ...p, attempts: [...p.attempts] }));
  }

  /** Sends one event to the subscribed callback, if any. `content` is encoded as the platform does. */
  push(event: string, userOpenId: string, content: Record<string, unknown>, opts: { videoId?: string } = {}): PushRecord | undefined {
    const subscription = this.subscriptions.get(eventTypeOf(event));
    if (!subscription || this.closed) return undefined;
    if (
      subscription.eventType === 'COMMENT' &&
      subscription.itemList.length > 0 &&
      opts.videoId &&
      !subscription.itemList.includes(opts.videoId)
    ) {
      return undefined;
    }
    const body = JSON.stringify({
      client_key: this.opts.appId,
      event,
      create_time: this.opts.nowSeconds(),
      user_openid: userOpenId,
      content: JSON.stringify(content),
    });
    const record: PushRecord = {
      id: randomBytes(8).toString('hex'),
      event,
      userOpenId,
      callbackUrl: subscription.callbackUrl,
      body,
      attempts: [],
      delivered: false,
    };
    this.pushes.push(record);
    if (this.pushes.length > 1000) this.pushes.shift();
    void this.attempt(record, 0);
    return record;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async attempt(record: PushRecord, attempt: number): Promise<void> {
    if (this.closed) return;
    const timestamp = Math.floor(Date.now() / 1000);
    let status: number | null = null;
    let error: string | undefined;
    try {
      const response = await request(record.callbackUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'tiktok-signature': signWebhook(this.opts.appSecret, timestamp, record.body),
          'webhook-schema-version': '1.0',
          'x-tt-logid': randomBytes(12).toString('hex'),
        },
        body: record.body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      status = response.statusCode;
      await response.body.dump();
    } catch (err) {
      error = (err as Error).message;
    }
    record.attempts.push({ at: new Date().toISOString(), status, ...(error ? { error } : {}) });
    if (status === 200) {
      record.delivered = true;
      return;
    }
    const delay = this.opts.retryDelaysMs[attempt];
    if (delay === undefined || this.closed) {
      this.opts.logger.warn({ event: record.event, callbackUrl: record.callbackUrl, status, error }, 'webhook push abandoned');
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(record, attempt + 1);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }
}
