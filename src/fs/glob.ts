// How latch reads a glob of a path rule: the envelope's rules, the walks' visibility rule, the
// credential quarantine and the protected write targets all match through these options.
import picomatch from "picomatch";

// How latch compiles every path glob: dot files included, and `*`, `**` and `?` match a newline like
// any other character of a name. picomatch's regexes use `.`, which stops at a newline without the
// `s` flag: the quarantine's `.ssh` glob then missed a key named `id<newline>rsa` inside `.ssh`, and a
// deny_paths rule missed any name holding a newline.
export const GLOB_OPTIONS = { dot: true, flags: "s" } as const;

const globCache = new Map<string, (s: string) => boolean>();

/** `s` as a regex source that matches exactly `s` (a name, a literal pattern). */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// How every envelope glob is read (the envelope's rules and the walks' visibility rule alike): dot
// files included, and a folder the glob covers counts as inside it (`**/.ssh/**` matches `.ssh`).
export function envelopeGlob(glob: string): (s: string) => boolean {
  let m = globCache.get(glob);
  if (!m) {
    const test = picomatch(glob, GLOB_OPTIONS);
    m = (s: string) => test(s) || test(s + "/x");
    globCache.set(glob, m);
  }
  return m;
}
