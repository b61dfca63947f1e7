// Where the workspace's links lead. The walk (secrets.ts) does not enter node_modules (nor site-packages:
// not-walked.ts), but the user's
// `cd src` through `src -> node_modules/x` puts their git there, and git's discovery climbs from
// there: review g36 made a repository in `node_modules/x` with `core.fsmonitor` and left that link in
// src's place; review g38 made one below where a link led (`cd src/lib`), and one above an empty
// `.git` folder that stopped latch's climb and not git's. So from each link in the walked folders to
// a folder the walk did not enter, the guard and the box walk that folder's tree (but its own
// node_modules or site-packages: a path through one is one by name, the walk's known limit; up to LINKED_FOLDERS) and
// look at every folder above it, up to the walk's, for anything git may take for a repository. A
// target is looked up step by step as the kernel goes (resolve()); one through `/proc` is followed by
// no one path for everyone (review g40), and the guard removes such links when new (link-guard.ts).
import { lstatSync, readlinkSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { bytesToInternal, osPath } from "../fs/names.js";
import { isInside } from "../fs/paths.js";
import { looksLikeGitDir } from "./masks.js";
import { NOT_WALKED } from "./not-walked.js";

/**
 * Folders walked through links, at most, in a box's walk; and links resolved by a lookup (those not
 * settled by the listings alone): each is a few syscalls, and one call can make tens of thousands
 * (review g38: 50,000 links made every later call 6.7 s). Past them no box starts, naming the link.
 * The guard's walk has no such budget: where it stopped short, a call's repository went unseen
 * (reviews g39 to g41: decoys spending it, or 10,000 folders in the user's own link's folder).
 */
export const LINKED_FOLDERS = 10_000;
export const LINKS_LOOKED_UP = 5_000;

/** What a listing of a walked folder gives this: its folders (walked, and node_modules) and its links. */
export interface LinkedListing {
  dirs: readonly string[];
  /** Folders the walk does not enter (not-walked.ts), by name. */
  skipped: readonly string[];
  /** Its links: the absolute path, and the target as written (as names.ts holds a name). */
  links: readonly (readonly [string, string])[];
  /** What it masks (secrets, denied paths), by absolute path: a folder among them is not walked either. */
  kinds: readonly (readonly [string, string])[];
  /** Its `.git` folder, when it holds one (by absolute path). */
  gitDirs: readonly string[];
}

/** One walk's count of what it followed. */
export interface FollowState {
  folders: number;
  lookedUp: number;
  /** Folders already given to the walk or climbed. */
  seen: Set<string>;
  /** Whether the budgets hold (a box's walk). */
  budget: boolean;
}

/** Where a path means what the process that follows it makes it mean. */
const BY_PROCESS = /^\/(proc|dev\/fd|dev\/stdin|dev\/stdout|dev\/stderr)(\/|$)/;

export const followState = (budget: boolean): FollowState => ({ folders: 0, lookedUp: 0, seen: new Set(), budget });

export interface Followed {
  /** Folders to walk, with the link that leads there (`PATH\0TARGET`). */
  targets: [string, string][];
  /** What the climbs found: git folders (and folders git takes for one), `.git` files, folders shut. */
  dirs: string[];
  files: string[];
  unreadable: string[];
  /** Why not all was followed (a box's budget spent). */
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
    // A git folder is not listed as a folder either: a link to `sub/.git` puts git's discovery in it,
    // where it looks for `.git/.git` first (review g40).
    for (const abs of l.gitDirs) m.set(path.basename(abs), "skipped");
    for (const [abs] of l.links) m.set(path.basename(abs), "link");
    byName.set(l, m);
  }
  return m;
}

/**
 * Where `links` lead that the walk has not listed (`walked`, by real path): the folders to walk, and
 * what git may find above each. Settled from the listings where the folder the link names its target
 * in was walked (no lookup: a walked folder's path is real, so a name in it is what the link leads
 * to); else looked up step by step (resolve(): a link out of the root may lead back in through
 * another). The root's own git folder stops a climb (it is the guard's own concern), and
 * `.git/worktrees` is not followed (read-only in the box whole).
 */
export function followLinks(
  root: string,
  links: readonly (readonly [string, string])[],
  walked: ReadonlyMap<string, LinkedListing>,
  state: FollowState,
): Followed {
  const out: Followed = {
    targets: [],
    dirs: [],
    files: [],
    unreadable: [],
    errors: [],
    unfollowed: [],
  };
  const own = path.join(root, ".git");
  for (const [link, written] of links) {
    // A link named like a folder the walk skips is one by name: a path through it is the walk's known
    // limit already (review g40: `web/node_modules -> ../node_modules` made every call refuse).
    if (NOT_WALKED.has(path.basename(link))) continue;
    const lexical = path.resolve(path.dirname(link), written);
    let target: string;
    // Not where a `..` follows a link the kernel resolves first (`sub/../x`, `sub` a link): looked up.
    const parent =
      written.split("/").includes("..") || BY_PROCESS.test(lexical) ? undefined : walked.get(path.dirname(lexical));
    const kind = parent && kinds(parent).get(path.basename(lexical));
    // A walked folder is listed; a link is followed as itself (but one named node_modules, which is
    // not: looked up); a file leads no `cd` anywhere.
    if (parent !== undefined && !(kind === "link" && NOT_WALKED.has(path.basename(lexical)))) {
      if (kind !== "skipped") continue;
      target = lexical;
    } else {
      if (state.budget && state.lookedUp++ >= LINKS_LOOKED_UP) {
        out.errors.push(
          `latch cannot follow every link of this workspace: more than ${LINKS_LOOKED_UP} lead where its walk does not ` +
            `look (\`${path.relative(root, link)}\` the first left). Remove links you do not need, or run this command uncontained.`,
        );
        break;
      }
      const r = resolve(path.dirname(link), written);
      if ("process" in r) {
        out.unfollowed.push(`${link}\0${written}`);
        continue;
      }
      if ("shut" in r) {
        if (isInside(root, r.shut) && r.shut !== root) out.unreadable.push(r.shut);
        continue;
      }
      if (r.to === undefined) continue; // leads nowhere (gone, a loop)
      target = r.to;
      if (target === root || !isInside(root, target) || walked.has(target)) continue;
      if (!lstatSync(osPath(target), { throwIfNoEntry: false })?.isDirectory()) continue; // no folder to `cd` into
    }
    if (isInside(path.join(own, "worktrees"), target) || state.seen.has(target)) continue;
    state.seen.add(target);
    out.targets.push([target, `${link}\0${written}`]);
    climb(path.dirname(target), root, walked, state.seen, out);
  }
  return out;
}

/** Links followed at most through one another in one lookup, as the kernel's (ELOOP). */
const HOPS = 40;

/**
 * Where `written`, a link's target in the folder `from` (a walked folder: its path is real), leads,
 * step by step as the kernel goes: each link on the way read (as bytes, names.ts), each `..` taken
 * after the link before it. `process`: a step through `/proc` or `/dev/fd`, where the follower's own
 * folder or descriptors decide (review g40: `d -> /`, then `d/proc/self/cwd/..`); `shut`: the folder
 * a step could not search (the guard opens it, as any the call shut).
 */
function resolve(from: string, written: string): { to?: string } | { process: true } | { shut: string } {
  let cur = written.startsWith("/") ? "/" : from;
  let todo = written.split("/").filter((c) => c !== "" && c !== ".");
  for (let hops = 0; todo.length > 0;) {
    const c = todo.shift()!;
    if (c === "..") {
      cur = path.dirname(cur);
      continue;
    }
    const next = cur === "/" ? `/${c}` : `${cur}/${c}`;
    if (BY_PROCESS.test(next)) return { process: true };
    let st;
    try {
      st = lstatSync(osPath(next), { throwIfNoEntry: false });
    } catch (err) {
      if (errnoCode(err) === "EACCES") return { shut: cur };
      return {}; // ENOTDIR, ENAMETOOLONG: nowhere
    }
    if (st === undefined) return {};
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (++hops > HOPS) return {};
    let to: string;
    try {
      to = bytesToInternal(readlinkSync(osPath(next), { encoding: "buffer" }));
    } catch {
      return {};
    }
    if (to.startsWith("/")) cur = "/";
    todo = [...to.split("/").filter((x) => x !== "" && x !== "."), ...todo];
  }
  return { to: cur };
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
