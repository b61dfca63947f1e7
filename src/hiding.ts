// Characters that hide, reorder or carry text a person cannot see: C1 controls (NEL breaks a line),
// the soft hyphen, bidi controls (U+202E shows `evil\u202egpj.txt` as `eviltxt.jpg`), the line and
// paragraph separators, invisible ones (U+200B, U+2060..U+206F, Hangul fillers, the BOM, U+FFF9..
// U+FFFB) and the tag characters U+E0000..U+E007F (nothing on a screen, but a model reads them).
// One list for the three places that must never pass them raw: names as latch shows them
// (src/fs/names.ts), approval text (src/approval/visible.ts) and shell lines (src/shell/line.ts,
// refused). Each adds its own rule for C0 controls, and the joiners U+200C/D where it wants them.

/** A character-class body (for a RegExp without the u flag): DEL, C1 and the hiding characters. */
export const HIDING_CLASS =
  "\\x7f-\\x9f\\xad\\u061c\\u115f\\u1160\\u180e\\u200b\\u200e\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164\\ufeff\\uffa0\\ufff9-\\ufffb";
/** A tag character, as its two UTF-16 halves. */
export const TAG = "\\uDB40[\\uDC00-\\uDC7F]";

/** `\uhhhh` for each UTF-16 unit (a tag character gives both halves, which read back as the pair). */
export function uEscape(c: string): string {
  return c.replace(/[^]/g, (u) => "\\u" + u.charCodeAt(0).toString(16).padStart(4, "0"));
}
