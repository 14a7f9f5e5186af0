/**
 * The caption limits, counted as the platform counts them: length in UTF-16 code units
 * (JavaScript's own string length, so an emoji outside the BMP counts 2), and mentions as `@name`
 * tokens. A video caption is the spec's 2,200; a photo post follows the official photo publish
 * limits: caption 4,000 and title 90.
 */
export const MAX_CAPTION_UTF16 = 2200;
export const MAX_PHOTO_CAPTION_UTF16 = 4000;
export const MAX_PHOTO_TITLE_UTF16 = 90;
export const MAX_MENTIONS = 30;

export function mentionCount(caption: string): number {
  return caption.match(/(^|\s)@[\w.]+/g)?.length ?? 0;
}

/** Why the caption is refused, or undefined. */
export function captionProblem(caption: string, maxUtf16 = MAX_CAPTION_UTF16): string | undefined {
  if (caption.length > maxUtf16) return `must be at most ${maxUtf16} UTF-16 code units (got ${caption.length})`;
  const mentions = mentionCount(caption);
  if (mentions > MAX_MENTIONS) return `must mention at most ${MAX_MENTIONS} accounts (got ${mentions})`;
  return undefined;
}
