// File names that are not plain text, with the one form every latch tool must show them in.

/** Bytes of a name: strings as UTF-8, number arrays as raw bytes. */
export const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

/**
 * Each name's bytes and its shown form: a non-UTF-8 byte, a newline, a tab, an ESC, a backslash, a C1
 * control (NEL, a line break to some readers), a bidi override (`evil` RLO `gpj.txt` shows as
 * `eviltxt.jpg`), plain text.
 */
export const ODD_NAMES: readonly [Buffer, string][] = [
  [bytes("bad", [0xff], ".txt"), "bad\\xff.txt"],
  [bytes("new\nline.txt"), "new\\nline.txt"],
  [bytes("tab\there.txt"), "tab\\there.txt"],
  [bytes("esc\x1b.txt"), "esc\\x1b.txt"],
  [bytes("back\\slash.txt"), "back\\\\slash.txt"],
  [bytes("nel\u0085.txt"), "nel\\u0085.txt"],
  [bytes("evil\u202egpj.txt"), "evil\\u202egpj.txt"],
  [bytes("plain é.txt"), "plain é.txt"],
];
