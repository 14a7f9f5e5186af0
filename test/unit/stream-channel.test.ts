import { keptByEventsAfter } from '../../core/db/repositories/events';
import { TEST_EVENT_TYPE } from '../../core/events/event-types';
import { credentialsNotice, eventNotice, parseEventNotice } from '../../core/events/stream-channel';

describe('event stream notices', () => {
  it('reads back an event position and a credentials withdrawal, whatever the customer id holds', () => {
    expect(parseEventNotice(eventNotice('cus_1', 42))).toEqual({ customerId: 'cus_1', position: 42 });
    expect(parseEventNotice(credentialsNotice('cus_1'))).toEqual({ customerId: 'cus_1', credentials: true });
    expect(parseEventNotice(eventNotice('cus:odd', 7))).toEqual({ customerId: 'cus:odd', position: 7 });
  });

  it('reads the stored row a notice carries after its position, colons and spaces in the row included', () => {
    const row = '{"id": "evt_1", "data": {"text": "a: b c"}}';
    expect(parseEventNotice(`${eventNotice('cus:odd', 7)} ${row}`)).toEqual({ customerId: 'cus:odd', position: 7, row });
  });

  it.each(['', 'cus_1', ':12', 'cus_1:', 'cus_1:x', 'cus_1:1.5', `cus_1:${2 ** 60}`, 'cus_1:credentials {}', 'cus_1:x {}'])(
    'refuses the malformed notice %j',
    (payload) => {
      expect(parseEventNotice(payload)).toBeUndefined();
    },
  );
});

describe("the stream's filter in memory, for events taken from notices", () => {
  // Each case is one EVENTS_AFTER's SQL decides the same way (listEventsAfter in core/db/repositories/events.ts).
  it.each([
    [[], [], 'vplat.comment.created', true],
    [['*'], [TEST_EVENT_TYPE], 'vplat.comment.created', true],
    [['*'], [TEST_EVENT_TYPE], TEST_EVENT_TYPE, false],
    [['*'], [], TEST_EVENT_TYPE, true],
    [['vplat.*'], [TEST_EVENT_TYPE], 'vplat.message.received', true],
    [['vplat.*'], [TEST_EVENT_TYPE], 'service.endpoint.disabled', false],
    [['vplat.comment.created'], [TEST_EVENT_TYPE], 'vplat.comment.created', true],
    [['vplat.comment.created'], [TEST_EVENT_TYPE], 'vplat.comment.deleted', false],
    [['service.*', TEST_EVENT_TYPE], [], TEST_EVENT_TYPE, true],
    [['vplat.comment.*'], [], 'vplat.commentary', false],
  ] as const)('types %j, hidden %j: %s is kept: %s', (types, hiddenTypes, type, kept) => {
    expect(keptByEventsAfter({ types, hiddenTypes }, type)).toBe(kept);
  });
});
