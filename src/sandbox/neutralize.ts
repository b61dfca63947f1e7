// A git folder made during a contained call (`git init`, `git clone`) is kept, with what would run
// code taken out (guard.ts decides which folders are new): hooks git could run, `commondir`,
// `config.worktree`, and config keys beyond SAFE_KEYS, the config as it was kept beside it. Every
// rename, read and write goes through descriptors (remove-beneath.ts, beneath.ts): a background
// process may swap a folder on the way for a link meanwhile.
import { closeSync, fstatSync, lstatSync, readdirSync, readFileSync, writeFileSync, type Stats } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { openFileBeneath, openFolder } from "../fs/beneath.js";
import { bytesToInternal, osPath, showName } from "../fs/names.js";
import { openUp, removeBeneath, SET_ASIDE } from "../fs/remove-beneath.js";
import type { Undone } from "./guard.js";

/** Config keys a new repository keeps (section, or section.* for any subsection, then key); git lowercases them. */
const SAFE_KEYS = new Set([
  "core.repositoryformatversion",
  "core.filemode",
  "core.bare",
  "core.logallrefupdates",
  "core.ignorecase",
  "core.precomposeunicode",
  "core.symlinks",
  "extensions.objectformat",
  "extensions.refstorage",
  "remote.*.url",
  "remote.*.fetch",
  "branch.*.remote",
  "branch.*.merge",
]);

/** What `git init` writes: the config of a new repository whose own could not be read line by line. */
const PLAIN_CONFIG =
  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

/**
 * What git may run as a hook, now or once a mode changes: a link (to whatever it leads), a file with
 * an execute bit, or a file with another name (review g30: a hard link of `notes.txt`, kept for its
 * mode 644, made 755 through that name in a later call while this `hooks/` was read-only).
 */
function mayRun(st: Stats | undefined): boolean {
  return st !== undefined && (st.isSymbolicLink() || (st.isFile() && ((st.mode & 0o111) !== 0 || st.nlink > 1)));
}

/**
 * A git folder made during the call (`git init`, `git clone`): kept, with what would run code taken
 * out: hooks other than git's samples, `commondir`, `config.worktree`, and config keys beyond SAFE_KEYS
 * (a new submodule's git folder under `modules/` is one of its own: repositories() lists it).
 */
export function neutralize(
  root: string,
  g: string,
  rel: (p: string) => string,
  setAside: (p: string, what: string) => void,
  out: Undone[],
  /** What the repository is, as far as latch knows (review g59: one of the user's below node_modules, newly gitlinked). */
  whose = "a repository made during the call",
) {
  const hooks = path.join(g, "hooks");
  const hooksSt = stat(hooks);
  if (hooksSt) {
    let names: string[] | undefined;
    try {
      names = hooksSt.isDirectory() ? listBeneath(root, hooks) : undefined;
    } catch {
      names = undefined; // unreadable: set aside whole
    }
    if (names === undefined) setAside(hooks, `hooks of ${whose}`);
    // git runs a hook file by its exact name; a folder there runs nothing, and moved, what it holds
    // would be walked a level later (review g24: one in `hooks/node_modules`, which no walk enters).
    // Nor does a file no execute bit lets git run (it says so and goes on): a folder the call named by
    // a `.git` file may hold the user's own there (review g29: `.git/modules/hooks`, the git folder of
    // their submodule `hooks`, lost its HEAD, config and index). In a later box this folder's hooks
    // are read-only, or it is judged again as new.
    for (const n of names ?? [])
      if (!n.endsWith(".sample") && !SET_ASIDE.test(n) && mayRun(stat(path.join(hooks, n))))
        setAside(path.join(hooks, n), `a hook of ${whose}`);
  }
  // A folder under git's name is none of these to git (the user's submodule `config`: review g29).
  for (const n of ["commondir", "config.worktree"]) {
    const p = path.join(g, n);
    const st = stat(p);
    if (st && !st.isDirectory()) setAside(p, `${n} of ${whose}`);
  }
  // Git's discovery from a folder in this one takes a `.git` here first (review g40: `src -> sub/.git`
  // and a repository made at `sub/.git/.git`).
  if (stat(path.join(g, ".git"))) setAside(path.join(g, ".git"), `a \`.git\` in ${whose}`);
  const cfg = path.join(g, "config");
  const cfgSt = stat(cfg);
  if (!cfgSt || cfgSt.isDirectory()) return;
  try {
    // One the call shut (a chmod) is set aside all the same: the rename needs no reading (review g44:
    // left in place, `NOT undone`, it made every later call's look throw).
    let text: string | undefined;
    let shut = false;
    try {
      text = readBeneath(root, cfg);
    } catch (err) {
      if (errnoCode(err) !== "EACCES") throw err;
      shut = true;
    }
    const safe = text === undefined ? PLAIN_CONFIG : safeConfig(text);
    if (!shut && safe === text) return;
    // Made through the folder's descriptor, O_EXCL: a link put there meanwhile is not followed, and
    // one that comes back between the rename and the write is set aside again (three tries). The
    // file as it was stays beside it, which git never reads: the keys may be the user's own.
    const asides: string[] = [];
    for (let tries = 1; ; tries++) {
      const r = removeBeneath(root, cfg, undefined, { aside: true });
      if (r.done === "aside") asides.push(r.name);
      const dir = openFolder(root, path.relative(root, g), { doing: "writing" });
      try {
        const write = () => writeFileSync(dir.at("config"), safe, { mode: 0o644, flag: "wx" });
        try {
          write();
        } catch (err) {
          // Shut again after the set-aside's own give-back (review g35: a loop re-setting `chmod 555`).
          if (errnoCode(err) !== "EACCES" || openUp(dir) === undefined) throw err;
          write();
        }
        break;
      } catch (err) {
        if (errnoCode(err) !== "EEXIST") throw err;
        if (tries === 3)
          throw new Error("it was made again 3 times while latch replaced it; the next check replaces it", {
            cause: err,
          });
      } finally {
        dir.close();
      }
    }
    out.push({
      path: rel(cfg),
      what:
        `rewritten: config keys that run programs dropped (${whose})` +
        (asides.length > 0
          ? `; the file as it was is kept as ${asides.map((a) => `\`${showName(a)}\``).join(", ")}`
          : ""),
    });
  } catch (err) {
    out.push({
      path: rel(cfg),
      what: `NOT undone (${(err as Error).message}): config of ${whose}`,
    });
  }
}

/** The names in the folder `dir` (below `root`), read through its descriptor. */
function listBeneath(root: string, dir: string): string[] {
  const f = openFolder(root, path.relative(root, dir), { doing: "reading" });
  try {
    return readdirSync(f.self(), { encoding: "buffer" }).map((n) => bytesToInternal(n));
  } finally {
    f.close();
  }
}

/**
 * The text of the regular file `file` (below `root`), opened through its folder's descriptor;
 * undefined for anything else (a link, a FIFO, a file with other names), which is then replaced.
 */
function readBeneath(root: string, file: string): string | undefined {
  let fd: number | null;
  try {
    fd = openFileBeneath({ abs: file, rel: path.relative(root, file) });
  } catch (err) {
    if (errnoCode(err) === "ELOOP") return undefined; // a link (O_NOFOLLOW): not read, replaced
    throw err;
  }
  if (fd === null) return undefined;
  try {
    const st = fstatSync(fd);
    return st.isFile() && st.nlink === 1 ? readFileSync(fd, "utf8") : undefined; // a hard link may be a file outside
  } finally {
    closeSync(fd);
  }
}

const SECTION = /^\s*\[([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\[\\"])*)")?\]\s*$/;
const KEY = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=.*)?$/;

/**
 * A git config with only SAFE_KEYS kept (comments and blank lines too). A line this reader does not
 * understand (a continuation, a key on a header's line) gives PLAIN_CONFIG: the keys it would keep
 * are not worth the doubt.
 */
function safeConfig(text: string): string {
  // git cuts a key at a NUL (`[remote "origin.uploadpack\0"] url = …` is remote.origin.uploadpack to
  // it, a kept url to this reader: review g14): such a config is not worth the doubt either.
  if (text.includes("\0")) return PLAIN_CONFIG;
  const kept: string[] = [];
  let section: string | undefined;
  for (const line of text.split("\n")) {
    if (/^\s*([#;].*)?$/.test(line)) {
      kept.push(line);
      continue;
    }
    if (line.trimEnd().endsWith("\\")) return PLAIN_CONFIG;
    const s = SECTION.exec(line);
    if (s) {
      section = s[2] === undefined ? s[1].toLowerCase() : `${s[1].toLowerCase()}.*`;
      kept.push(line);
      continue;
    }
    const k = KEY.exec(line);
    if (!k || section === undefined) return PLAIN_CONFIG;
    if (SAFE_KEYS.has(`${section}.${k[1].toLowerCase()}`)) kept.push(line);
  }
  return kept.join("\n");
}

function stat(p: string): Stats | undefined {
  try {
    return lstatSync(osPath(p));
  } catch {
    return undefined;
  }
}
