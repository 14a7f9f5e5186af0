import { EVENT_TYPES, isSubscriptionPattern, patternMatches, TEST_EVENT_TYPE } from '../../core/events/event-types';

describe('the test event type', () => {
  it('is addressed to one endpoint: no pattern, not even "*", matches it', () => {
    for (const pattern of ['*', 'vplat.*', TEST_EVENT_TYPE]) expect(patternMatches(pattern, TEST_EVENT_TYPE)).toBe(false);
  });

  it('cannot be subscribed to, and is outside the subscribable types', () => {
    expect(isSubscriptionPattern(TEST_EVENT_TYPE)).toBe(false);
    expect(EVENT_TYPES).not.toContain(TEST_EVENT_TYPE);
  });
});
