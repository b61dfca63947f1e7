// Git in the box, for repositories that track a quarantined file (a committed `.env`, test keys, a
// fixture `.ssh/`). The plain mask (/dev/null over a file, an empty folder over a folder) is something
// git cannot hash: contained `git diff` failed (`unsupported file type`) and `git status` reported
// ` M .env` and ` D .ssh/id_rsa` that never happened. For each tracked, masked file the box instead
// shows a file of zero bytes of the same size and mode (git's stat check then hashes it instead of
// calling it modified), and git is told, for exactly those paths and only in the box:
//   - `filter=latch-masked`: its clean filter is `git cat-file blob :<path>`, so the file hashes to
//     the index's blob: status, diff, add and commit see no change, and none is made;
//   - `diff=latch-withheld`: a diff that would show its content (history: `git log -p`, `git diff
//     HEAD~1`) shows one line saying it was withheld, with the blob id git prints anyway;
//   - `-text -ident`: no conversion of the filter's output.
// The attributes go in the repository's `$GIT_DIR/info/attributes` (the highest precedence: the
// workspace's `.gitattributes` cannot undo them) by a tmpfs over `info/` that binds its entries back,
// read-only; the drivers go in the environment (GIT_CONFIG_COUNT). Nothing changes on disk: the
// user's index is written only by the git the model runs, as it would be uncontained. The committed
// bytes stay in `.git/objects`, which the box can read (`git show HEAD:.env`): docs/security.md.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { isInside } from "../fs/paths.js";
import type { WorkspaceScan } from "./secrets.js";
import { realpathOf } from "../fs/realpath.js";

export interface GitView {
  /** A tracked quarantined file (its real path) → the file of zeros, of its size and mode, bound over it. */
  files: ReadonlyMap<string, string>;
  /** bwrap arguments, after the masks: each repository's `info/` with the attributes, and the drivers. */
  args: string[];
}

const NONE: GitView = { files: new Map(), args: [] };

/** The drivers, as `git -c` would give them (GIT_CONFIG_COUNT: git 2.31). */
const DRIVERS: readonly [string, string][] = [
  ["filter.latch-masked.clean", "git cat-file blob :%f"],
  [
    "diff.latch-withheld.textconv",
    'f() { printf "latch: content withheld (a quarantined path; blob %s)\\n" "$(git hash-object --no-filters -- "$1")"; }; f',
  ],
  ["diff.latch-withheld.binary", "false"],
];

const ATTRS = "filter=latch-masked diff=latch-withheld -text -ident";

/** Per repository: the tracked entries under the asked paths, kept while the index file is unchanged. */
const tracked = new Map<string, { key: string; entries: { rel: string; exec: boolean }[] }>();
const MAX_REPOS = 32;

let store: string | undefined;

/** A private folder for mask and attributes files (no secret byte is in them), removed when latch exits. */
function storeDir(): string {
  if (store === undefined) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "latch-git-view-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    store = dir;
  }
  return store;
}

/** A file of `size` zero bytes (sparse), executable or not; reused while it is as made. */
function zeros(size: number, exec: boolean): string {
  const p = path.join(storeDir(), `${size}-${exec ? "x" : "r"}`);
  const st = statOf(p);
  if (st?.isFile() && st.size === size) return p;
  rmSync(p, { force: true });
  writeFileSync(p, "", { mode: 0o600, flag: "wx" });
  truncateSync(p, size);
  chmodSync(p, exec ? 0o555 : 0o444);
  return p;
}

function stored(content: string): string {
  const p = path.join(storeDir(), `attributes-${createHash("sha256").update(content).digest("hex").slice(0, 32)}`);
  if (statOf(p)?.isFile()) return p;
  writeFileSync(p, content, { mode: 0o444, flag: "w" });
  return p;
}

function statOf(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** A root-relative path as an attributes pattern matching only it: glob characters escaped, blanks as `?`. */
function pattern(rel: string): string {
  return "/" + rel.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/[\s"]/g, "?");
}

/**
 * The tracked regular files (stage 0) among `rels` in the repository whose work tree is `wt`, asked of
 * git outside the box with nothing that runs a program (core.fsmonitor off, no optional locks).
 */
function trackedEntries(wt: string, rels: string[], pathEnv: string | undefined): { rel: string; exec: boolean }[] {
  const index = statOf(path.join(wt, ".git", "index"));
  if (!index?.isFile()) return [];
  const key = `${index.ino}:${index.size}:${index.mtimeMs}:${rels.join("\0")}`;
  const hit = tracked.get(wt);
  if (hit?.key === key) return hit.entries;
  let out: string;
  try {
    out = execFileSync(
      "git",
      [
        "--literal-pathspecs",
        "--no-optional-locks",
        "-c",
        "core.fsmonitor=false",
        "ls-files",
        "-z",
        "-s",
        "--",
        ...rels,
      ],
      {
        cwd: wt,
        env: { PATH: pathEnv ?? "/usr/bin:/bin", GIT_DIR: path.join(wt, ".git"), GIT_WORK_TREE: wt },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  } catch {
    return []; // no git, or one that refuses this repository (safe.directory): the plain masks
  }
  const entries: { rel: string; exec: boolean }[] = [];
  for (const rec of out.split("\0")) {
    const m = /^(100644|100755) [0-9a-f]+ 0\t(.+)$/s.exec(rec);
    if (m) entries.push({ rel: m[2], exec: m[1] === "100755" });
  }
  tracked.delete(wt);
  tracked.set(wt, { key, entries });
  if (tracked.size > MAX_REPOS) tracked.delete(tracked.keys().next().value!);
  return entries;
}

/** bwrap arguments for `info/` of `gitDir`: a tmpfs with each entry bound back, and the attributes file. */
function infoMounts(info: string, extra: string): string[] | undefined {
  if (!statOf(info)?.isDirectory()) return undefined; // made by `git init`; without it, the plain masks
  const out = ["--tmpfs", info];
  let mine = "";
  for (const e of readdirSync(info, { withFileTypes: true })) {
    const p = path.join(info, e.name);
    if (e.name === "attributes") {
      if (e.isFile()) mine = readFileSync(p, "utf8");
      continue;
    }
    if (e.isSymbolicLink()) out.push("--symlink", readlinkSync(p), p);
    else out.push("--ro-bind", p, p);
  }
  if (mine !== "" && !mine.endsWith("\n")) mine += "\n";
  mine += `# latch: quarantined paths, shown as zeros in the box (docs/security.md)\n${extra}`;
  out.push("--ro-bind", stored(mine), path.join(info, "attributes"), "--remount-ro", info);
  return out;
}

/**
 * The view of the tracked quarantined files among `scan.secrets`, for the root's repository (a `.git`
 * folder at the root) and each nested one. A secret reached through a link, a repository whose `.git`
 * is a file (a worktree, a submodule's checkout) or has no `info/`, keeps the plain mask.
 */
export function gitView(root: string, scan: Pick<WorkspaceScan, "secrets" | "gitDirs">, pathEnv?: string): GitView {
  const repos = [
    ...(statOf(path.join(root, ".git"))?.isDirectory() ? [root] : []),
    ...scan.gitDirs.map((g) => path.dirname(g)),
  ].sort((a, b) => b.length - a.length); // deepest first: a secret belongs to the nearest repository
  if (repos.length === 0 || scan.secrets.length === 0) return NONE;
  const byRepo = new Map<string, string[]>();
  for (const s of scan.secrets) {
    let real: string;
    try {
      real = realpathOf(s);
    } catch {
      continue;
    }
    const wt = real === s ? repos.find((r) => isInside(r, s) && r !== s) : undefined;
    if (wt) byRepo.set(wt, [...(byRepo.get(wt) ?? []), path.relative(wt, s)]);
  }
  const files = new Map<string, string>();
  const args: string[] = [];
  for (const [wt, rels] of byRepo) {
    const masks: [string, string][] = [];
    let lines = "";
    for (const e of trackedEntries(wt, rels, pathEnv)) {
      const abs = path.join(wt, e.rel);
      const st = statOf(abs);
      if (!st?.isFile() || realpathOf(abs) !== abs) continue; // gone (git says deleted, in the box too) or a link
      masks.push([abs, zeros(st.size, e.exec)]);
      lines += `${pattern(e.rel)} ${ATTRS}\n`;
    }
    if (masks.length === 0) continue;
    const info = infoMounts(path.join(wt, ".git", "info"), lines);
    if (!info) continue;
    for (const [abs, mask] of masks) files.set(abs, mask);
    for (const item of info) args.push(item);
  }
  if (files.size === 0) return NONE;
  args.push("--setenv", "GIT_CONFIG_COUNT", String(DRIVERS.length));
  DRIVERS.forEach(([k, v], i) =>
    args.push("--setenv", `GIT_CONFIG_KEY_${i}`, k, "--setenv", `GIT_CONFIG_VALUE_${i}`, v),
  );
  return { files, args };
}
