/**
 * Invisible or control characters, refused in names and skill file paths: Unicode category C
 * (controls, format characters such as U+200B, private use, unassigned, surrogates), the line
 * and paragraph separators, the characters Unicode says to render as nothing
 * (Default_Ignorable_Code_Point: the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the
 * combining grapheme joiner U+034F, U+17B4, …) and the blank Braille pattern U+2800, which
 * displays as a space but is not one.
 *
 * Variation selectors (U+FE00 to U+FE0F, U+E0100 to U+E01EF) are default-ignorable too, but they
 * choose how the character before them looks ("❤️" is U+2764 U+FE0F): allowed after a character,
 * refused at the start.
 *
 * One format character is allowed where it is visible: the zero-width joiner (U+200D) inside an
 * emoji sequence, which joins emoji into one picture ("👨‍👩‍👧", "👩🏽‍💻", "❤️‍🔥"). It counts as
 * such when it follows an emoji (optionally with a skin-tone modifier or the emoji presentation
 * selector U+FE0F) and precedes one. Anywhere else (leading, trailing, doubled, between letters)
 * it is refused like any other invisible character.
 */
const INVISIBLE_OR_CONTROL = /[\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u

const SELECTING_VARIATION = /(?<=.)[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gsu

const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}[\u{1F3FB}-\u{1F3FF}]?\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu

/** Whether `text` holds an invisible or control character (a joiner inside an emoji sequence is not one). */
export const hasInvisibleOrControl = (text: string): boolean =>
  INVISIBLE_OR_CONTROL.test(text.replace(EMOJI_JOINER, "").replace(SELECTING_VARIATION, ""))

export const INVISIBLE_OR_CONTROL_MESSAGE = "must not contain invisible or control characters"
