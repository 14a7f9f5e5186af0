/**
 * The app's webhook subscription at the Business API (one callback per event type, for every
 * authorized account) and the verification of the pushes it sends.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { hmacKeyOf } from '../../crypto/hmac-keys';
import { parseJsonLossless } from '../../events/lossless-json';
import type { VplatClient } from './client';

export type WebhookEventType = 'VIDEO' | 'COMMENT' | 'DIRECT_MESSAGE' | 'BRAND_MENTION';

export interface WebhookSubscription {
  app_id: string;
  event_type: WebhookEventType;
  callback_url?: string;
  item_list?: string[];
}

export function updateWebhook(
  client: VplatClient,
  input: { eventType: WebhookEventType; callbackUrl: string; itemList?: string[] },
): Promise<WebhookSubscription> {
  return client.appPost('business/webhook/update/', {
    app_id: client.settings.appId,
    secret: client.settings.appSecret,
    event_type: input.eventType,
    callback_url: input.callbackUrl,
    ...(input.itemList ? { item_list: input.itemList } : {}),
  });
}

export function getWebhook(client: VplatClient, eventType: WebhookEventType): Promise<WebhookSubscription> {
  return client.appGet('business/webhook/list/', {
    app_id: client.settings.appId,
    secret: client.settings.appSecret,
    event_type: eventType,
  });
}

export function deleteWebhook(
  client: VplatClient,
  input: { eventType: WebhookEventType; itemList?: string[] },
): Promise<WebhookSubscription> {
  return client.appPost('business/webhook/delete/', {
    app_id: client.settings.appId,
    secret: client.settings.appSecret,
    event_type: input.eventType,
    ...(input.itemList ? { item_list: input.itemList } : {}),
  });
}

/** The event types the service logs: comments and direct messages. */
export const SUBSCRIBED_EVENT_TYPES: readonly WebhookEventType[] = ['COMMENT', 'DIRECT_MESSAGE'];

/** Points the app's subscriptions at the service's receiver. */
export async function subscribeToPlatformWebhooks(client: VplatClient, callbackUrl: string): Promise<void> {
  for (const eventType of SUBSCRIBED_EVENT_TYPES) await updateWebhook(client, { eventType, callbackUrl });
}

/** The envelope of every push; `content` is JSON text that must be parsed again. */
export interface OfficialWebhook {
  client_key: string;
  event: string;
  create_time: number;
  user_openid: string;
  content: string;
}

export type WebhookVerdict = { ok: true; webhook: OfficialWebhook; content: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Replay window for pushes. The platform's sample uses 5 s; pushes are retried for up to 72 hours
 * and clocks drift, so we allow the 300 s most client libraries use and dedupe by content id.
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Checks `TikTok-Signature: t=<unix s>,s=<hex>`: HMAC-SHA256 keyed by the app secret over
 * "<t>.<raw body>", compared in constant time, with a stale `t` refused.
 */
export function verifyOfficialWebhook(opts: {
  appSecret: string;
  appId?: string;
  signatureHeader: string | undefined;
  rawBody: string;
  nowSeconds?: number;
  toleranceSeconds?: number;
}): WebhookVerdict {
  if (!opts.signatureHeader) return { ok: false, reason: 'missing signature header' };
  const parts = new Map<string, string>();
  for (const piece of opts.signatureHeader.split(',')) {
    const at = piece.indexOf('=');
    if (at > 0) parts.set(piece.slice(0, at).trim(), piece.slice(at + 1).trim());
  }
  const t = parts.get('t');
  const s = parts.get('s');
  if (!t || !s || !/^\d+$/.test(t) || !/^[0-9a-f]+$/i.test(s)) return { ok: false, reason: 'malformed signature header' };
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(t)) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return { ok: false, reason: 'stale timestamp' };
  const expected = Buffer.from(createHmac('sha256', hmacKeyOf(opts.appSecret)).update(`${t}.${opts.rawBody}`).digest('hex'));
  const given = Buffer.from(s.toLowerCase());
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'signature mismatch' };
  let webhook: OfficialWebhook;
  let content: Record<string, unknown>;
  try {
    webhook = JSON.parse(opts.rawBody) as OfficialWebhook;
    // Ids in content are 19-digit JSON numbers: kept exact, as strings, where a double would round them.
    const parsed: unknown = typeof webhook.content === 'string' ? parseJsonLossless(webhook.content) : undefined;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, reason: 'content is not a JSON object' };
    content = parsed as Record<string, unknown>;
  } catch {
    return { ok: false, reason: 'body is not valid JSON' };
  }
  if (typeof webhook.event !== 'string' || typeof webhook.user_openid !== 'string')
    return { ok: false, reason: 'missing event or user_openid' };
  if (opts.appId && webhook.client_key !== opts.appId) return { ok: false, reason: 'push for another app' };
  return { ok: true, webhook, content };
}
