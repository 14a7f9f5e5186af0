/**
 * business/webhook/update, list and delete: the app-level subscription that tells the platform
 * where to push events of each type. Authenticated by the app's id and secret, not a token.
 */
import type { FastifyInstance } from 'fastify';
import { appRoute, type SandboxContext } from '../context';
import { OfficialError } from '../official-error';
import type { Params } from '../params';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhooks';

function checkApp(ctx: SandboxContext, params: Params): WebhookEventType {
  const appId = params.requiredString('app_id');
  const secret = params.requiredString('secret');
  const eventType = params.requiredString('event_type', { oneOf: WEBHOOK_EVENT_TYPES }) as WebhookEventType;
  if (appId !== ctx.settings.vplatAppId || secret !== ctx.settings.vplatAppSecret) {
    throw new OfficialError(40101, 'Invalid app_id or secret.');
  }
  return eventType;
}

export function registerWebhookConfig(app: FastifyInstance, ctx: SandboxContext): void {
  appRoute(app, 'business', 'POST', '/open_api/v1.3/business/webhook/update/', ({ body }) => {
    const eventType = checkApp(ctx, body);
    const callbackUrl = body.requiredString('callback_url', { max: 2048 });
    let parsed: URL;
    try {
      parsed = new URL(callbackUrl);
    } catch {
      throw new OfficialError(40002, 'callback_url: Not a valid URL.');
    }
    // The platform requires https; the emulator also takes http so that local receivers work.
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new OfficialError(40002, 'callback_url: Not a valid URL.');
    const itemList = body.stringArray('item_list', { max: 100 }) ?? [];
    if (itemList.length > 0 && eventType !== 'COMMENT')
      throw new OfficialError(40002, 'item_list: Only allowed for the COMMENT event type.');
    const subscription = ctx.webhooks.subscribe(eventType, callbackUrl, itemList);
    return {
      app_id: ctx.settings.vplatAppId,
      event_type: eventType,
      callback_url: subscription.callbackUrl,
      item_list: subscription.itemList,
    };
  });

  appRoute(app, 'business', 'GET', '/open_api/v1.3/business/webhook/list/', ({ query }) => {
    const eventType = checkApp(ctx, query);
    const subscription = ctx.webhooks.subscription(eventType);
    return {
      app_id: ctx.settings.vplatAppId,
      event_type: eventType,
      ...(subscription ? { callback_url: subscription.callbackUrl, item_list: subscription.itemList } : {}),
    };
  });

  appRoute(app, 'business', 'POST', '/open_api/v1.3/business/webhook/delete/', ({ body }) => {
    const eventType = checkApp(ctx, body);
    const itemList = body.stringArray('item_list', { max: 100 });
    ctx.webhooks.unsubscribe(eventType, itemList);
    return { app_id: ctx.settings.vplatAppId, event_type: eventType, ...(itemList ? { item_list: itemList } : {}) };
  });
}
