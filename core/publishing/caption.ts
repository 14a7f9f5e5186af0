/**
 * The caption limits of the spec, counted as the platform counts them: length in UTF-16 code
 * units (JavaScript's own string length, so an emoji outside the BMP counts 2), and mentions as
 * `@name` tokens.
 */
export const MAX_CAPTION_UTF16 = 2200;
export const MAX_MENTIONS = 30;

export function mentionCount(caption: string): number {
  return caption.match(/(^|\s)@[\w.]+/g)?.length ?? 0;
}

/** Why the caption is refused, or undefined. */
export function captionProblem(caption: string): string | undefined {
  if (caption.length > MAX_CAPTION_UTF16) return `must be at most ${MAX_CAPTION_UTF16} UTF-16 code units (got ${caption.length})`;
  const mentions = mentionCount(caption);
  if (mentions > MAX_MENTIONS) return `must mention at most ${MAX_MENTIONS} accounts (got ${mentions})`;
  return undefined;
}
