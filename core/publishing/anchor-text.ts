/**
 * The product anchor text (`productTitle`, officially `product_link_info.title`), checked by the
 * service before a shop pre-check or post so a bad title is our 2001 naming the field, not an
 * official refusal after a round trip (and, for a pre-check, not a used-up daily slot).
 *
 * The spec says "at most 30 characters, no punctuation or emoji". Characters are counted as code
 * points, as the shop counts them (an emoji is one character, and is refused anyway). Punctuation
 * and symbols (Unicode P and S, which covers most emoji) and pictographs are refused; letters of
 * any script, digits and spaces pass. A blank title is refused too: the shop shows the anchor text
 * as the link's label, and a label of spaces only is not one.
 */
export const ANCHOR_TEXT_MAX_CHARACTERS = 30;

// Emoji are not all in \p{S}: keycaps, flags and joiners combine otherwise harmless code points.
const FORBIDDEN = /[\p{P}\p{S}\p{Extended_Pictographic}\p{Regional_Indicator}\u{200D}\u{FE0F}\u{20E3}]/u;

/** Why the anchor text is refused (without the field name), or undefined when it is acceptable. */
export function anchorTextProblem(title: string): string | undefined {
  if (title.trim() === '') return 'must not be empty';
  const length = [...title].length;
  if (length > ANCHOR_TEXT_MAX_CHARACTERS) {
    return `must be at most ${ANCHOR_TEXT_MAX_CHARACTERS} characters (got ${length})`;
  }
  const forbidden = FORBIDDEN.exec(title);
  if (forbidden) return `must not contain punctuation, symbols or emoji (found "${forbidden[0]}")`;
  return undefined;
}
