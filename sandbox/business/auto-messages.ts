/**
 * Automatic messages (welcome message, suggested questions, chat prompts): get, create, update,
 * delete, sort and status, with the official counts and lengths. Review takes REVIEW_MS of the
 * emulator's clock and approves; changes push the auto-message webhooks.
 */
import type { FastifyInstance } from 'fastify';
import { officialRoute, requireOwnBusiness, type SandboxContext } from '../context';
import { BUSINESS } from '../official-error';
import { Params } from '../params';
import { AUTO_MESSAGE_SPECS, AUTO_MESSAGE_TYPES, type AutoMessage, type AutoMessageType, type MessageStore } from './message-store';

const REVIEW_MS = 10_000;

export function registerAutoMessages(app: FastifyInstance, ctx: SandboxContext, store: MessageStore): void {
  const AUTO = '/open_api/v1.3/business/message/auto_message';

  const wireAuto = (m: AutoMessage) => ({
    auto_message_id: m.autoMessageId,
    auto_message_type: m.type,
    audit_status: m.auditStatus,
    [AUTO_MESSAGE_SPECS[m.type].key]: { ...m.content },
  });

  const pushConfig = (openId: string, m: AutoMessage, action: 'CREATE' | 'UPDATE' | 'DELETE' | 'ENABLE' | 'DISABLE') =>
    ctx.webhooks.push('im_auto_message_config_update', openId, {
      auto_message_id: m.autoMessageId,
      auto_message_type: m.type,
      auto_message_action: action,
      timestamp: Math.floor(ctx.clock.now()),
      [AUTO_MESSAGE_SPECS[m.type].key]: { ...m.content },
    });

  /** Review on the virtual clock; an update in between restarts it. */
  const review = (openId: string, m: AutoMessage) => {
    const version = m.version;
    ctx.clock.after(REVIEW_MS, () => {
      if (m.version !== version || m.auditStatus !== 'REVIEWING' || store.autoMessage(openId, m.autoMessageId) !== m) return;
      m.auditStatus = 'APPROVED';
      ctx.webhooks.push('im_auto_message_audit_update', openId, {
        auto_message_id: m.autoMessageId,
        auto_message_type: m.type,
        audit_status: m.auditStatus,
        timestamp: Math.floor(ctx.clock.now()),
      });
    });
  };

  const typeParam = (p: Params, allowed: readonly AutoMessageType[] = AUTO_MESSAGE_TYPES) =>
    p.requiredString('auto_message_type', { oneOf: allowed }) as AutoMessageType;

  /** The one object of the type, every field within its limit, no other type's object, not a duplicate. */
  const readContent = (openId: string, b: Params, type: AutoMessageType, self?: AutoMessage) => {
    const spec = AUTO_MESSAGE_SPECS[type];
    for (const other of AUTO_MESSAGE_TYPES) {
      const key = AUTO_MESSAGE_SPECS[other].key;
      if (other !== type && b.has(key)) throw BUSINESS.invalid(key, `Not allowed with auto_message_type ${type}.`);
    }
    const content = Object.fromEntries(
      Object.entries(spec.fields).map(([field, max]) => [field, b.requiredString(`${spec.key}.${field}`, { max })]),
    );
    const identity = (c: Record<string, string>) => c[spec.identity]!.trim().toLowerCase();
    const duplicate = store.autoMessages(openId, type).find((m) => m !== self && identity(m.content) === identity(content));
    if (duplicate) throw BUSINESS.invalid(`${spec.key}.${spec.identity}`, `Duplicates the auto message ${duplicate.autoMessageId}.`);
    return content;
  };

  const find = (openId: string, type: AutoMessageType, id: string) => {
    const m = store.autoMessage(openId, id);
    if (!m) throw BUSINESS.notFound(`Auto message ${id}`);
    if (m.type !== type) throw BUSINESS.invalid('auto_message_type', `Does not match the auto message (${m.type}).`);
    return m;
  };

  officialRoute(app, ctx, 'business', 'GET', `${AUTO}/get/`, (call) => {
    const account = requireOwnBusiness(call, 'query');
    const type = typeParam(call.query);
    const id = call.query.string('auto_message_id');
    const messages = id === undefined ? store.autoMessages(account.openId, type) : [find(account.openId, type, id)];
    return { business_id: account.openId, operation_status: store.autoStatus(account.openId, type), auto_messages: messages.map(wireAuto) };
  });

  officialRoute(app, ctx, 'business', 'POST', `${AUTO}/create/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const type = typeParam(call.body);
    const { max } = AUTO_MESSAGE_SPECS[type];
    if (store.autoMessages(account.openId, type).length >= max) {
      throw BUSINESS.invalid(
        'auto_message_type',
        `At most ${max} ${type} auto message${max > 1 ? 's' : ''} per account; update or delete an existing one.`,
      );
    }
    const content = readContent(account.openId, call.body, type);
    const m = store.addAutoMessage(account.openId, type, content);
    pushConfig(account.openId, m, 'CREATE');
    review(account.openId, m);
    return { auto_message: { auto_message_id: m.autoMessageId } };
  });

  officialRoute(app, ctx, 'business', 'POST', `${AUTO}/update/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const type = typeParam(call.body);
    const m = find(account.openId, type, call.body.requiredString('auto_message_id'));
    if (m.auditStatus === 'REVIEWING')
      throw BUSINESS.invalid('auto_message_id', 'The auto message is under review and cannot be updated until the review ends.');
    m.content = readContent(account.openId, call.body, type, m);
    m.version += 1;
    m.auditStatus = 'REVIEWING';
    pushConfig(account.openId, m, 'UPDATE');
    review(account.openId, m);
    return { auto_message: { auto_message_id: m.autoMessageId } };
  });

  officialRoute(app, ctx, 'business', 'POST', `${AUTO}/delete/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const type = typeParam(call.body);
    if (type === 'WELCOME_MESSAGE')
      throw BUSINESS.invalid('auto_message_type', 'A welcome message cannot be deleted; disable it with auto_message/status/update/.');
    const m = find(account.openId, type, call.body.requiredString('auto_message_id'));
    store.removeAutoMessage(account.openId, m);
    pushConfig(account.openId, m, 'DELETE');
    return {};
  });

  officialRoute(app, ctx, 'business', 'POST', `${AUTO}/sort/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const type = typeParam(call.body, ['CHAT_PROMPT']);
    const ids = call.body.stringArray('auto_message_ids');
    if (!ids) throw BUSINESS.missing('auto_message_ids');
    const current = store.autoMessages(account.openId, type).map((m) => m.autoMessageId);
    if (ids.length !== current.length || new Set(ids).size !== ids.length || !ids.every((id) => current.includes(id))) {
      throw BUSINESS.invalid('auto_message_ids', 'Must list every CHAT_PROMPT auto message of the account exactly once.');
    }
    store.sortAutoMessages(account.openId, type, ids);
    return {};
  });

  officialRoute(app, ctx, 'business', 'POST', `${AUTO}/status/update/`, (call) => {
    const account = requireOwnBusiness(call, 'body');
    const type = typeParam(call.body);
    const status = call.body.requiredString('operation_status', { oneOf: ['ENABLE', 'DISABLE'] }) as 'ENABLE' | 'DISABLE';
    store.setAutoStatus(account.openId, type, status);
    for (const m of store.autoMessages(account.openId, type)) pushConfig(account.openId, m, status);
    return {};
  });
}

/** The links media/download hands out: bytes only with `x-user: <Access-Token>` of the account, for 24 hours. */
