import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  EVENT_CATALOGUE,
  eventNameOf,
  PLATFORM,
  platformOf,
  presentedEventName,
  SERVICE_NAMESPACE,
  typeOfOfficial,
  type CatalogueEntry,
} from '../../core/events/event-types';
import { normalizeOfficial } from '../../core/events/official-events';

const rows = Object.entries(EVENT_CATALOGUE) as [keyof typeof EVENT_CATALOGUE, CatalogueEntry][];

describe('the event catalogue', () => {
  it.each(rows)('gives %s a platform that is its namespace, vplat or service', (type) => {
    expect([PLATFORM, SERVICE_NAMESPACE]).toContain(platformOf(type));
    expect(type.startsWith(`${platformOf(type)}.`)).toBe(true);
  });

  it('names the official original event for what the platform pushes, and the type for what the service makes', () => {
    expect(Object.fromEntries(rows.map(([type]) => [type, eventNameOf(type)]))).toEqual({
      'vplat.comment.created': 'comment.update',
      'vplat.comment.deleted': 'comment.update',
      'vplat.comment.visibility_changed': 'comment.update',
      'vplat.message.received': 'im_receive_msg',
      'vplat.message.sent': 'im_send_msg',
      'vplat.publish.status_changed': 'vplat.publish.status_changed',
      'vplat.publish.unconfirmed': 'vplat.publish.unconfirmed',
      'vplat.video.available': 'vplat.video.available',
      'vplat.video.failed': 'vplat.video.failed',
      'vplat.account.authorization_removed': 'vplat.account.authorization_removed',
      'service.endpoint.disabled': 'service.endpoint.disabled',
      'service.endpoint.test': 'service.endpoint.test',
    });
    // The service namespace holds the service's own events: none has an official original.
    for (const [type, row] of rows) if (platformOf(type) === SERVICE_NAMESPACE) expect(row.official).toBeUndefined();
  });

  it('shows a row stored under a former name with the current one, and leaves any other name as stored', () => {
    expect(presentedEventName('vplat.message.sent', 'message.send')).toBe('im_send_msg');
    expect(presentedEventName('vplat.message.sent', 'im_send_msg')).toBe('im_send_msg');
    expect(presentedEventName('service.endpoint.disabled', 'endpoint_disabled')).toBe('service.endpoint.disabled');
    expect(presentedEventName('vplat.account.authorization_removed', 'token_refresh_refused')).toBe('vplat.account.authorization_removed');
    // A former name is only former for its own type.
    expect(presentedEventName('vplat.message.received', 'message.send')).toBe('message.send');
    expect(presentedEventName('vplat.unknown', 'message.send')).toBe('message.send');
    // No current name is another row's former one.
    const current = new Set(rows.map(([type]) => eventNameOf(type)));
    for (const [, row] of rows) for (const old of row.formerly ?? []) expect(current.has(old)).toBe(false);
  });

  it('logs an official push under the type the catalogue names for it, and ignores names it does not list', () => {
    const push = (event: string) => ({ client_key: 'app', event, create_time: 1_700_000_000, user_openid: 'biz', content: '{}' });
    expect(typeOfOfficial('im_receive_msg')).toBe('vplat.message.received');
    expect(typeOfOfficial('im_send_msg')).toBe('vplat.message.sent');
    // Shared by three types: decided by its action, not by the name.
    expect(typeOfOfficial('comment.update')).toBeUndefined();
    expect(normalizeOfficial(push('im_send_msg'), { message_id: 'm1' })).toMatchObject({
      type: 'vplat.message.sent',
      event: 'im_send_msg',
    });
    expect(normalizeOfficial(push('comment.update'), { comment_action: 'delete' })).toMatchObject({
      type: 'vplat.comment.deleted',
      event: 'comment.update',
    });
    for (const ignored of ['post.publish.complete', 'im_mark_read_msg', 'vplat.publish.status_changed', 'constructor'])
      expect(normalizeOfficial(push(ignored), {})).toBeUndefined();
  });

  it('is the table in docs/api.md, row for row: type, platform and event', () => {
    const text = readFileSync(path.join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
    const section = text.slice(text.indexOf('### Event catalogue'));
    const table = section.slice(section.indexOf('| type |'), section.indexOf('\n\n', section.indexOf('| type |')));
    const documented = table
      .split('\n')
      .slice(2)
      .map((line) =>
        line
          .split('|')
          .slice(1, 4)
          .map((cell) => cell.trim().replace(/^`|`$/g, '')),
      );
    expect(documented).toEqual(rows.map(([type]) => [type, platformOf(type), eventNameOf(type)]));
  });
});
