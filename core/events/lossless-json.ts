/**
 * JSON.parse that keeps integers beyond 2^53 exact by reading them as strings. The platform sends
 * 19-digit ids as JSON numbers in webhook content; a plain parse would round them and the ids
 * would no longer match the REST API's. Safe integers and every other value parse as usual.
 */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d{16,}(?![\d.eE])/g;

export function parseJsonLossless(text: string): unknown {
  const guarded = text.replace(TOKENS, (token) => (token.startsWith('"') || Number.isSafeInteger(Number(token)) ? token : `"${token}"`));
  return JSON.parse(guarded);
}
