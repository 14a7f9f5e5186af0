/**
 * The characters Postgres text and jsonb cannot hold: U+0000, and half of a UTF-16 surrogate pair
 * without the other half (JSON's `"\ud800"` parses to one; truncated text makes them). One rule
 * for every place that refuses, replaces or checks them.
 */

/** Half of a UTF-16 pair without the other half. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const UNSTORABLE_EVERYWHERE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g');

export function holdsUnstorable(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

/** The text with U+FFFD for each character Postgres cannot hold. */
export function replaceUnstorable(text: string): string {
  return text.replace(UNSTORABLE_EVERYWHERE, '\ufffd');
}
