import { credentialsNotice, eventNotice, parseEventNotice } from '../../core/events/stream-channel';

describe('event stream notices', () => {
  it('reads back an event position and a credentials withdrawal, whatever the customer id holds', () => {
    expect(parseEventNotice(eventNotice('cus_1', 42))).toEqual({ customerId: 'cus_1', position: 42 });
    expect(parseEventNotice(credentialsNotice('cus_1'))).toEqual({ customerId: 'cus_1', credentials: true });
    expect(parseEventNotice(eventNotice('cus:odd', 7))).toEqual({ customerId: 'cus:odd', position: 7 });
  });

  it.each(['', 'cus_1', ':12', 'cus_1:', 'cus_1:x', 'cus_1:1.5', `cus_1:${2 ** 60}`])('refuses the malformed notice %j', (payload) => {
    expect(parseEventNotice(payload)).toBeUndefined();
  });
});
