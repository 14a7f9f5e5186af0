import { EVENT_TYPES, isSubscriptionPattern, patternMatches } from '../../core/events/event-types';

describe('isSubscriptionPattern', () => {
  it.each(['*', 'vplat.*'])('accepts the wildcard %j', (pattern) => {
    expect(isSubscriptionPattern(pattern)).toBe(true);
  });

  it.each(EVENT_TYPES)('accepts the event type %s', (type) => {
    expect(isSubscriptionPattern(type)).toBe(true);
  });

  it.each(['vplat.comment.*', 'other.*', 'vplat.unknown', '', 'vplat', '**', 'VPLAT.*', 'toString', '__proto__'])(
    'refuses %j',
    (pattern) => {
      expect(isSubscriptionPattern(pattern)).toBe(false);
    },
  );
});

describe('patternMatches', () => {
  it('matches every type with "*"', () => {
    for (const type of EVENT_TYPES) expect(patternMatches('*', type)).toBe(true);
  });

  it('matches every type of the platform with "vplat.*"', () => {
    for (const type of EVENT_TYPES.filter((t) => t.startsWith('vplat.'))) expect(patternMatches('vplat.*', type)).toBe(true);
    // The service's own notices are not the platform's: "*" or the exact type subscribes to them.
    expect(patternMatches('vplat.*', 'service.endpoint.disabled')).toBe(false);
    expect(patternMatches('vplat.*', 'vplat.message.received')).toBe(true);
  });

  it('does not let "vplat.*" match a type that merely starts with the same letters', () => {
    expect(patternMatches('vplat.*', 'vplatx.y')).toBe(false);
    expect(patternMatches('vplat.*', 'vplat')).toBe(false);
    expect(patternMatches('vplat.*', 'other.message.received')).toBe(false);
  });

  it('matches an exact type only with itself', () => {
    expect(patternMatches('vplat.comment.created', 'vplat.comment.created')).toBe(true);
    expect(patternMatches('vplat.comment.created', 'vplat.comment.deleted')).toBe(false);
    expect(patternMatches('vplat.comment.created', 'vplat.comment.created.extra')).toBe(false);
    expect(patternMatches('vplat.comment.created', 'vplat.comment')).toBe(false);
  });
});
