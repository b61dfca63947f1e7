// When latch runs as root (containers, CI), a contained process is uid 0 too: its capabilities are
// dropped, but the owner and group bits of root's own files still let it read them (/etc/shadow is
// root:shadow 0640). A uid switch would lock it out of a root-owned workspace as well, so instead the
// paths only root may read are covered, unreadably: found once per process by a shallow walk of the
// folders that hold them (docs/security.md, "Contained processes as root").
import { closeSync, lstatSync, mkdtempSync, openSync, readdirSync, rmSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isInside } from "../fs/paths.js";

/** Where root-only files live. /tmp and /var/tmp are the users' (and the fixtures'): the private /tmp hides one. */
const ROOTS = [
  "/etc",
  "/root",
  "/home",
  "/var/lib",
  "/var/log",
  "/var/spool",
  "/var/backups",
  "/var/mail",
  "/var/cache",
  "/opt",
  "/srv",
  "/boot",
  "/usr/local/etc",
];

/**
 * How deep below each of ROOTS the walk looks: /etc is small (about a thousand entries) and holds the
 * keys (/etc/kubernetes/pki/*.key is 3 below); the others are large (dpkg's thousands of files) and
 * hold root's folders near the top (/var/lib/private). A user's files under /home are theirs, not root's.
 */
const MAX_DEPTH: Record<string, number> = { "/etc": 4 };
const DEFAULT_DEPTH = 2;

let found: readonly string[] | undefined;

/** Root's uid and gid: the ids a contained process of a root latch keeps. */
function rootMayRead(st: Stats, bits: number): boolean {
  if ((st.mode & bits) === bits) return false; // everyone may: nothing to hide
  return (st.uid === 0 && ((st.mode >> 6) & bits) !== 0) || (st.gid === 0 && ((st.mode >> 3) & bits) !== 0);
}

/**
 * Files and folders under ROOTS that root may read and others may not (a folder: not world r-x), the
 * topmost of each subtree; empty files left out (each mount costs every spawn). Kept for the process:
 * a root-only file made, or filled, later is not covered.
 */
export function rootOnlyPaths(): readonly string[] {
  if (found) return found;
  const out: string[] = [];
  const walk = (p: string, depth: number) => {
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      return; // absent, or gone meanwhile
    }
    if (st.isSymbolicLink()) return; // mounts follow links: the target is walked where it lives, if at all
    if (st.isDirectory()) {
      if (rootMayRead(st, 0o5)) {
        out.push(p);
        return;
      }
      if (depth >= limit) return;
      let names: string[];
      try {
        names = readdirSync(p);
      } catch {
        return;
      }
      for (const n of names.sort()) walk(path.join(p, n), depth + 1);
    } else if (st.size > 0 && rootMayRead(st, 0o4)) out.push(p); // an empty one (a lock file) holds nothing to read
  };
  let limit = DEFAULT_DEPTH;
  for (const r of ROOTS) {
    limit = MAX_DEPTH[r] ?? DEFAULT_DEPTH;
    walk(r, 0);
  }
  found = out;
  return out;
}

let unreadable: string | undefined;

/** An empty file no one but CAP_DAC_OVERRIDE may open (mode 0000), bound over each root-only file. */
function unreadableFile(): string {
  if (unreadable) return unreadable;
  const dir = mkdtempSync(path.join(os.tmpdir(), "latch-sbx-"));
  const f = path.join(dir, "unreadable");
  closeSync(openSync(f, "wx", 0o000));
  // Bound by the sandboxes of this process only: gone with it (a SIGKILL leaves an empty folder in the temp dir).
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  unreadable = f;
  return f;
}

/**
 * bwrap arguments hiding `paths` from a contained process, unreadably: a tmpfs of mode 0000 over a
 * folder, the 0000 file over anything else. The workspace `root` stays: a folder that holds it is not
 * covered, its other entries are, down to the workspace; a path inside the workspace is left alone.
 */
export function rootOnlyMounts(paths: readonly string[], root: string): string[] {
  const out: string[] = [];
  const cover = (p: string) => {
    if (isInside(root, p)) return; // the workspace's own: the process works there
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) return;
    if (!st.isDirectory()) out.push("--ro-bind", unreadableFile(), p);
    else if (!isInside(p, root)) out.push("--perms", "0000", "--tmpfs", p, "--remount-ro", p);
    else {
      let names: string[] = [];
      try {
        names = readdirSync(p);
      } catch {
        // unlistable even for latch: nothing found to cover on the way to the workspace
      }
      for (const n of names) cover(path.join(p, n));
    }
  };
  for (const p of paths) cover(p);
  return out;
}
