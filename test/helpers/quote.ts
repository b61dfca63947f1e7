// A path as one word of a shell line: fixtures live under TMPDIR, whose path may hold a space, a
// non-ASCII letter or a quote (a clone in "~/My Projects"), and an unquoted path splits into words.
export function shq(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
