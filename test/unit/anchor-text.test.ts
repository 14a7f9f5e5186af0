/** The product anchor text rule shared by shop pre-checks and shop posts. */
import { ANCHOR_TEXT_MAX_CHARACTERS, anchorTextProblem } from '../../core/publishing/anchor-text';

describe('anchorTextProblem', () => {
  it.each([['Summer sale'], ['a'.repeat(ANCHOR_TEXT_MAX_CHARACTERS)], ['Été 2026 promo'], ['限定セール 50'], ['Новая коллекция']])(
    'accepts %j',
    (title) => {
      expect(anchorTextProblem(title)).toBeUndefined();
    },
  );

  it('counts code points, not UTF-16 units', () => {
    expect(anchorTextProblem('字'.repeat(30))).toBeUndefined();
    expect(anchorTextProblem('𠀀'.repeat(30))).toBeUndefined();
    expect(anchorTextProblem('𠀀'.repeat(31))).toBe('must be at most 30 characters (got 31)');
  });

  it('refuses more than 30 characters before looking at the characters', () => {
    expect(anchorTextProblem(`${'a'.repeat(30)}!`)).toMatch(/at most 30 characters \(got 31\)/);
  });

  it.each([
    ['Buy now!', '!'],
    ['50% off', '%'],
    ['a,b', ','],
    ['Price $5', '$'],
    ['Deal \u{1F525}', '\u{1F525}'],
    ['\u{1F1EB}\u{1F1F7} shop', '\u{1F1EB}'],
    ['Number 1\u{FE0F}\u{20E3}', '\u{FE0F}'],
    ['it’s', '’'],
  ])('refuses punctuation, symbols and emoji in %j', (title, found) => {
    expect(anchorTextProblem(title)).toBe(`must not contain punctuation, symbols or emoji (found "${found}")`);
  });

  it('refuses an empty or blank title', () => {
    expect(anchorTextProblem('')).toBe('must not be empty');
    expect(anchorTextProblem('   ')).toBe('must not be empty');
  });
});
