/**
 * Invisible or control characters, refused in names and skill file paths: Unicode category C
 * (controls, format characters such as U+200B, private use, unassigned, surrogates) and the line
 * and paragraph separators.
 *
 * One format character is allowed where it is visible: the zero-width joiner (U+200D) inside an
 * emoji sequence, which joins emoji into one picture ("👨‍👩‍👧", "👩🏽‍💻", "❤️‍🔥"). It counts as
 * such when it follows an emoji (optionally with a skin-tone modifier or the emoji presentation
 * selector U+FE0F) and precedes one. Anywhere else (leading, trailing, doubled, between letters)
 * it is refused like any other invisible character.
 */
const INVISIBLE_OR_CONTROL = /[\p{C}\p{Zl}\p{Zp}]/u

const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}[\u{1F3FB}-\u{1F3FF}]?\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu

/** Whether `text` holds an invisible or control character (a joiner inside an emoji sequence is not one). */
export const hasInvisibleOrControl = (text: string): boolean =>
  INVISIBLE_OR_CONTROL.test(text.replace(EMOJI_JOINER, ""))

export const INVISIBLE_OR_CONTROL_MESSAGE = "must not contain invisible or control characters"
