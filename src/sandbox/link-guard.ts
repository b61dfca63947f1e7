// The links a contained call made that no one path can follow for everyone (linked.ts): through
// `/proc` or `/dev/fd`, where the follower's own folder decides where they lead (review g39:
// `/proc/self/cwd/..` is latch's folder to latch, the user's shell's to the user; g40: by way of a link
// to `/`). Removed, not set aside: a link holds nothing but its target, which the result gives back as
// the command that makes it again, and a set-aside name can be too long to make (review g40). Links
// that were there before the call, the user's, stay.
import path from "node:path";
import { showName } from "../fs/names.js";
import { unlinkBeneath } from "../fs/remove-beneath.js";
import type { Undone } from "./guard.js";

/** Links removed, said one by one; the rest in one line. */
const SAID = 10;

/** Remove the links in `unfollowed` (`PATH\0TARGET`) that are not in `before`; what was done, and how many went. */
export function removeNewLinks(
  root: string,
  before: ReadonlySet<string>,
  unfollowed: readonly string[],
  rel: (p: string) => string,
): { out: Undone[]; removed: number } {
  const out: Undone[] = [];
  let removed = 0;
  const quote = (s: string) => `'${showName(s).replaceAll("'", `'\\''`)}'`;
  const why = "a link made during the call through /proc or /dev/fd: where it leads depends on who follows it";
  for (const k of new Set(unfollowed)) {
    if (before.has(k)) continue;
    const abs = k.slice(0, k.indexOf("\0"));
    try {
      const r = unlinkBeneath(root, abs);
      if (r.done === "gone") continue;
      removed++;
      const again = `ln -s ${quote(r.target)} ${quote(path.relative(root, abs))}`;
      out.push({ path: rel(abs), what: `removed (\`${again}\` at the root makes it again); ${why}` });
    } catch (err) {
      out.push({ path: rel(abs), what: `NOT undone (${(err as Error).message}): ${why}` });
    }
  }
  // Said in a few lines, not thousands: the result and the policy log carry each.
  const more = out.length - SAID;
  if (more > 0) {
    const failed = out.slice(SAID).filter((u) => u.what.startsWith("NOT ")).length;
    out.splice(SAID, more, {
      path: ".",
      what: `${more} more such links removed likewise` + (failed > 0 ? `; ${failed} of them NOT undone` : ""),
    });
  }
  return { out, removed };
}
