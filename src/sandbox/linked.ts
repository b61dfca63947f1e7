// Where the workspace's links lead. The walk (secrets.ts) does not enter node_modules, but the user's
// `cd src` through `src -> node_modules/x` puts their git there, and git's discovery climbs from
// there: review g36 made a repository in `node_modules/x` with `core.fsmonitor` and left that link in
// src's place; review g38 made one below where a link led (`cd src/lib`), and one above an empty
// `.git` folder that stopped latch's climb and not git's. So from each link in the walked folders to
// a folder the walk did not enter, the guard and the box walk that folder's whole tree (node_modules in
// it too, up to LINKED_FOLDERS) and look at every folder above it, up to the walk's, for anything git
// may take for a repository.
import { accessSync, constants, lstatSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { osPath } from "../fs/names.js";
import { isInside } from "../fs/paths.js";
import { realpathOf } from "../fs/realpath.js";
import { SET_ASIDE } from "../fs/remove-beneath.js";
import { looksLikeGitDir } from "./masks.js";

/**
 * Folders walked through links, at most, in one walk; and links resolved by a lookup (those not
 * settled by the listings alone): each is a few syscalls, and one call can make tens of thousands
 * (review g38: 50,000 links made every later call 6.7 s).
 */
export const LINKED_FOLDERS = 10_000;
export const LINKS_LOOKED_UP = 5_000;

/** What a listing of a walked folder gives this: its folders (walked, and node_modules) and its links. */
export interface LinkedListing {
  dirs: readonly string[];
  /** Folders the walk does not enter (node_modules), by name. */
  skipped: readonly string[];
  /** Its links: the absolute path, and the target as written (as names.ts holds a name). */
  links: readonly (readonly [string, string])[];
  /** What it masks (secrets, denied paths), by absolute path: a folder among them is not walked either. */
  kinds: readonly (readonly [string, string])[];
}

/** One walk's count of what it followed. */
export interface FollowState {
  folders: number;
  lookedUp: number;
  /** Folders already given to the walk or climbed. */
  seen: Set<string>;
}

/** Where a path means what the process that follows it makes it mean. */
const BY_PROCESS = /^\/(proc|dev\/fd|dev\/stdin|dev\/stdout|dev\/stderr)(\/|$)/;

export const followState = (): FollowState => ({ folders: 0, lookedUp: 0, seen: new Set() });

export interface Followed {
  /** Folders to walk, with the link that leads there. */
  targets: [string, string][];
  /** What the climbs found: git folders (and folders git takes for one), `.git` files, folders shut. */
  dirs: string[];
  files: string[];
  unreadable: string[];
  /** Why not all was followed (a budget spent). */
  errors: string[];
  /**
   * Links whose target depends on who follows it (through `/proc` or `/dev/fd`: `/proc/self/cwd/..`
   * is the user's shell's folder to the user, latch's to latch: review g39), as `PATH\0TARGET`.
   */
  unfollowed: string[];
}

/** What each listing holds by name, built once per listing (a memo of the listing itself). */
const byName = new WeakMap<LinkedListing, Map<string, "dir" | "skipped" | "link">>();

function kinds(l: LinkedListing): Map<string, "dir" | "skipped" | "link"> {
  let m = byName.get(l);
  if (m === undefined) {
    m = new Map();
    for (const d of l.dirs) m.set(d, "dir");
    for (const d of l.skipped) m.set(d, "skipped");
    // A folder named like a secret (or denied) is not entered by the walk: a link there is followed
    // as one into node_modules (review g39: `src -> certs.key`, a repository made in it).
    for (const [abs, kind] of l.kinds) if (kind === "dir") m.set(path.basename(abs), "skipped");
    for (const [abs] of l.links) m.set(path.basename(abs), "link");
    byName.set(l, m);
  }
  return m;
}

/**
 * Where `links` lead that the walk has not listed (`walked`, by real path): the folders to walk, and
 * what git may find above each. Settled from the listings where the folder the link names its target
 * in was walked (no lookup: a walked folder's path is real, so a name in it is what the link leads
 * to); else looked up (realpath: a link out of the root may lead back in through another). The root's own git folder stops a climb (it is the guard's own concern), and
 * `.git/worktrees` is not followed (read-only in the box whole).
 */
export function followLinks(
  root: string,
  links: readonly (readonly [string, string])[],
  walked: ReadonlyMap<string, LinkedListing>,
  state: FollowState,
): Followed {
  const out: Followed = { targets: [], dirs: [], files: [], unreadable: [], errors: [], unfollowed: [] };
  const own = path.join(root, ".git");
  for (const [link, written] of links) {
    // One the guard set aside (a link made past the budget, guard.ts): no `cd` goes by such a name.
    if (SET_ASIDE.test(link)) continue;
    const lexical = path.resolve(path.dirname(link), written);
    if (BY_PROCESS.test(lexical)) {
      out.unfollowed.push(`${link}\0${written}`);
      continue;
    }
    let target: string;
    // Not where a `..` follows a link the kernel resolves first (`sub/../x`, `sub` a link): looked up.
    const parent = written.split("/").includes("..") ? undefined : walked.get(path.dirname(lexical));
    if (parent !== undefined) {
      const kind = kinds(parent).get(path.basename(lexical));
      // A walked folder is listed; a link is followed as itself; a file leads no `cd` anywhere.
      if (kind !== "skipped") continue;
      target = lexical;
    } else {
      if (++state.lookedUp > LINKS_LOOKED_UP) {
        out.errors.push(
          `latch cannot follow every link of this workspace: more than ${LINKS_LOOKED_UP} lead where its walk does not ` +
            `look (the last \`${path.relative(root, link)}\`). Remove links you do not need, or run this command uncontained.`,
        );
        break;
      }
      try {
        target = realpathOf(link);
      } catch (err) {
        // Through a folder that cannot be searched: that folder, opened by the guard as any the call shut.
        if (errnoCode(err) === "EACCES") {
          const shut = firstShut(root, lexical);
          if (shut !== undefined) out.unreadable.push(shut);
        }
        continue; // leads nowhere (ENOENT, ELOOP)
      }
      if (target === root || !isInside(root, target) || walked.has(target)) continue;
      if (!lstatSync(osPath(target), { throwIfNoEntry: false })?.isDirectory()) continue; // no folder to `cd` into
    }
    if (isInside(path.join(own, "worktrees"), target) || state.seen.has(target)) continue;
    state.seen.add(target);
    out.targets.push([target, link]);
    climb(path.dirname(target), root, walked, state.seen, out);
  }
  return out;
}

/**
 * From `dir` up to the first folder the walk listed: every `.git` and every folder git may take for a
 * git directory, as git's discovery may stop at any (it goes past one it cannot use: review g38, an
 * empty `lib/.git` or a `lib/HEAD` file stopped latch's climb, not git's).
 */
function climb(dir: string, root: string, walked: ReadonlyMap<string, unknown>, seen: Set<string>, out: Followed) {
  const own = path.join(root, ".git");
  // The root's own git folder stops the climb, past its own `.git`, which git looks at first (review
  // g39: `src -> .git/x` and a repository made at `.git/.git`; a new one is set aside as a control
  // entry too, masks.ts).
  if (dir === own || isInside(own, dir)) {
    const dotGit = lstatSync(osPath(path.join(own, ".git")), { throwIfNoEntry: false });
    if (dotGit !== undefined) (dotGit.isDirectory() ? out.dirs : out.files).push(path.join(own, ".git"));
  }
  for (let d = dir; d !== root && d !== own && isInside(root, d) && !walked.has(d); d = path.dirname(d)) {
    if (seen.has(`^${d}`)) return; // climbed from here before
    seen.add(`^${d}`);
    if (isInside(path.join(own, "worktrees"), d)) return;
    try {
      const dotGit = lstatSync(osPath(path.join(d, ".git")), { throwIfNoEntry: false });
      if (dotGit !== undefined) (dotGit.isDirectory() ? out.dirs : out.files).push(path.join(d, ".git"));
      if (looksLikeGitDir(d)) out.dirs.push(d);
    } catch (err) {
      if (errnoCode(err) === "EACCES") {
        out.unreadable.push(d); // opened by the guard as any folder the call shut, and climbed again
        return;
      }
      if (!["ENOTDIR", "ENOENT", "ELOOP", "ENAMETOOLONG"].includes(errnoCode(err) ?? "")) throw err;
    }
  }
}

/** The first folder on the way from the root to `to` (a link's target, as written) that cannot be searched. */
function firstShut(root: string, to: string): string | undefined {
  const steps = path.relative(root, to).split(path.sep);
  for (let i = 1; i <= steps.length; i++) {
    const d = path.join(root, ...steps.slice(0, i));
    try {
      accessSync(osPath(d), constants.X_OK);
    } catch (err) {
      if (errnoCode(err) !== "EACCES") return undefined;
      // A link on the way (`src -> l2/lib`, `l2 -> node_modules/x`): the folder it leads to is the shut one.
      if (!lstatSync(osPath(d)).isSymbolicLink()) return d;
      try {
        const real = realpathOf(d);
        return isInside(root, real) && real !== root ? real : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
