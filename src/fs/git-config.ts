// Reading a git config as git reads it (config.c), for what latch must know of one: the object format
// of an index and a submodule's worktree (sandbox/gitlinks.ts), and what a config names that runs
// later: its `core.hooksPath` folder and the files it includes, which the user may keep in the
// workspace (`.githooks`, `include.path = ../tools/gitconfig`) and the model could rewrite (reviews g5,
// g6, g7). Where latch read a value otherwise than git (a comment mark inside quotes, an escape), the
// model chose what latch saw.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { isInside, walkBelow } from "./paths.js";
import { osPath } from "./names.js";
import { racy } from "./racy.js";

/** One `key = value` of a config: section and key lowercased, the subsection as written. */
interface Entry {
  section: string;
  sub?: string;
  key: string;
  /** The value as git takes it (quotes and escapes undone, comments dropped); null: one git refuses. */
  value: string | null;
}

const HEADER = /^\[([A-Za-z0-9.-]+)(\s+"((?:[^"\\]|\\.)*)")?\]\s*(.*)$/s;
const KEY = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/s;
/** A header at a line's start, its subsection quoted as HEADER reads it. */
const HEADER_START = /^\s*\[[A-Za-z0-9.-]*(?:\s+"(?:[^"\\]|\\.)*")?\]/;

/** A value as git parses it: `"` quotes, `\\ \" \n \t \b` escapes, `#`/`;` outside quotes a comment. */
function parseValue(raw: string): string | null {
  let out = "";
  let quoted = false;
  let pending = ""; // whitespace kept only when more follows (git trims the end)
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (!quoted && (c === "#" || c === ";")) break;
    if (!quoted && (c === " " || c === "\t")) {
      if (out !== "") pending += c;
      continue;
    }
    out += pending;
    pending = "";
    if (c === '"') quoted = !quoted;
    else if (c === "\\") {
      const e = raw[++i];
      const map: Record<string, string> = { "\\": "\\", '"': '"', n: "\n", t: "\t", b: "\b" };
      if (e === undefined || map[e] === undefined) return null; // git: "bad config line"
      out += map[e];
    } else out += c;
  }
  return quoted ? null : out;
}

/**
 * The config's lines, a value's line ending in a backslash joined to the next as git joins them; not
 * a comment's (git ends a comment at the newline, backslash or not: joined, the next line's key was
 * hidden from latch and read by git).
 */
function joined(text: string): string[] {
  const out: string[] = [];
  let carry = "";
  for (const raw of text.split("\n")) {
    const line = carry + raw.replace(/\r$/, "");
    carry = "";
    let quoted = false;
    let comment = false;
    let escaped = false;
    // The header as git reads one, a quoted subsection whole (review g12: `[x "]"] # \` was cut at the
    // first `]`, the rest read as an open quote ending in an escape, and the next line joined).
    for (const c of line.replace(HEADER_START, "")) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') quoted = !quoted;
      else if (!quoted && (c === "#" || c === ";")) {
        comment = true;
        break;
      }
    }
    if (!comment && escaped) carry = line.slice(0, -1);
    else out.push(line);
  }
  if (carry !== "") out.push(carry);
  return out;
}

/**
 * The key as git hands it on: `section.sub.key` cut at a NUL, as C reads it (review g13: `[options
 * "strategy\0"] k = a/b` is `options.strategy` to git's sequencer), split again.
 */
function asGitKeys(section: string, sub: string | undefined, key: string): Omit<Entry, "value"> {
  if (sub === undefined || !sub.includes("\0")) return { section, sub, key };
  const full = `${section}.${sub}`.slice(0, `${section}.${sub}`.indexOf("\0"));
  const first = full.indexOf(".");
  const last = full.lastIndexOf(".");
  if (first === -1) return { section: full, key: "" }; // no key left: matches nothing
  return first === last
    ? { section: full.slice(0, first), key: full.slice(first + 1).toLowerCase() }
    : { section: full.slice(0, first), sub: full.slice(first + 1, last), key: full.slice(last + 1).toLowerCase() };
}

/** Every entry of a config's text, in order; `bad` when a line is one git refuses. */
function entries(text: string): { list: Entry[]; bad: boolean } {
  const list: Entry[] = [];
  let bad = false;
  let section: string | undefined;
  let sub: string | undefined;
  for (let line of joined(text)) {
    line = line.trim();
    const header = HEADER.exec(line);
    if (header) {
      section = header[1].toLowerCase();
      sub = header[3]?.replace(/\\(.)/g, "$1");
      line = header[4];
    }
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const kv = KEY.exec(line);
    if (!kv || section === undefined) {
      bad = true;
      continue;
    }
    const value = kv[2] === undefined ? "true" : parseValue(kv[2]);
    if (value === null) bad = true;
    list.push({ ...asGitKeys(section, sub, kv[1].toLowerCase()), value });
  }
  return { list, bad };
}

/**
 * The value of `section.key` (a section without subsection: `[extensions]`, not `[extensions "x"]`),
 * the last one set, as git takes it. `undefined` when it is not set; `null` when the config holds a
 * line git refuses (then git reads none of it), which a caller must not take for "not set".
 */
export function configValue(text: string, section: string, key: string): string | undefined | null {
  const { list, bad } = entries(text);
  if (bad) return null;
  let value: string | undefined;
  for (const e of list) if (e.section === section && e.sub === undefined && e.key === key) value = e.value!;
  return value;
}

/**
 * Whether every line of a config is one this reader understands (else git may read it otherwise); a
 * NUL anywhere is not (git cuts a key at one: review g13).
 */
export function configUnderstood(text: string): boolean {
  return !text.includes("\0") && !entries(text).bad;
}

/** Every value of `section.key` (no subsection), in order, as git takes each (null: one git refuses); lines git refuses aside. */
export function configValues(text: string, section: string, key: string): (string | null)[] {
  return entries(text)
    .list.filter((e) => e.section === section && e.sub === undefined && e.key === key)
    .map((e) => e.value);
}

/** The files a config includes (`[include] path`, `[includeIf "…"] path`, every condition taken as met), as written. */
export function configIncludes(text: string): string[] {
  return entries(text)
    .list.filter((e) => (e.section === "include" || e.section === "includeif") && e.key === "path")
    .flatMap((e) => (e.value ? [e.value] : []));
}

/**
 * A file's text (a config, a `.git` file: all of it, as git reads it), undefined when there is none or
 * none git could read either (too long a name, a loop, no permission); `noLink`: a link is none.
 */
export function readText(file: string, noLink = false): string | undefined {
  let fd: number;
  try {
    fd = openSync(osPath(file), constants.O_RDONLY | constants.O_NONBLOCK | (noLink ? constants.O_NOFOLLOW : 0));
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "ELOOP", "ENAMETOOLONG", "EACCES"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    // Read to a bound, not to the end: procfs says size 0 for files that never end (review g9: an
    // include of `/proc/self/pagemap` grew latch's buffer until the process aborted, nothing undone).
    const buf = Buffer.allocUnsafe(MAX_TEXT_BYTES + 1);
    let n = 0;
    for (let got; n <= MAX_TEXT_BYTES && (got = readSync(fd, buf, n, buf.length - n, null)) > 0;) n += got;
    return n > MAX_TEXT_BYTES ? undefined : buf.toString("utf8", 0, n);
  } finally {
    closeSync(fd);
  }
}

/** More than this is no config or `.git` file latch reads (git's are a few KiB). */
const MAX_TEXT_BYTES = 1 << 20;

/** The environment a user's git reads its config files by (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*). */
export type GitEnv = Readonly<Record<string, string | undefined>>;

/** git's include depth limit (config.c, MAX_INCLUDE_DEPTH); and at most this many files read in all. */
const INCLUDE_DEPTH = 10;
const MAX_FILES = 64;

/**
 * The config files git reads for the repository whose git folder is `gitDir`, in git's order: the
 * system's, the user's (XDG's, then `~/.gitconfig`), the repository's (in its common folder, for a
 * linked worktree), and the worktree's `config.worktree` (read always: more named is only more asked).
 */
function configFiles(gitDir: string, env: GitEnv): string[] {
  const out: string[] = [];
  if (!gitBool(env.GIT_CONFIG_NOSYSTEM)) out.push(env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig");
  if (env.GIT_CONFIG_GLOBAL !== undefined) out.push(env.GIT_CONFIG_GLOBAL);
  else {
    const xdg = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, ".config") : undefined);
    if (xdg) out.push(path.join(xdg, "git", "config"));
    if (env.HOME) out.push(path.join(env.HOME, ".gitconfig"));
  }
  const common = readText(path.join(gitDir, "commondir"))?.replace(/\r?\n$/, "");
  out.push(path.join(common ? path.resolve(gitDir, common) : gitDir, "config"));
  out.push(path.join(gitDir, "config.worktree"));
  return out.filter((f) => f !== "" && path.isAbsolute(f));
}

/** An environment variable as git_env_bool reads it (review g9: `GIT_CONFIG_NOSYSTEM=0` is false to git). */
function gitBool(v: string | undefined): boolean {
  if (v === undefined || v === "") return false;
  const t = v.toLowerCase();
  if (["true", "yes", "on"].includes(t)) return true;
  if (["false", "no", "off"].includes(t)) return false;
  const n = Number(t);
  return Number.isInteger(n) && n !== 0; // a word git refuses: the system's config read, more named
}

/** An include's path as git takes it (config.c): `~/` from HOME, `%(prefix)/` the install's (not ours), else relative to the file naming it. */
function includePath(named: string, from: string, env: GitEnv): string | undefined {
  if (named === "" || named.startsWith("%(prefix)/")) return undefined;
  if (named === "~" || named.startsWith("~/")) return env.HOME ? path.join(env.HOME, named.slice(1)) : undefined;
  if (named.startsWith("~")) return undefined; // ~user: another user's home, outside
  return path.resolve(path.dirname(from), named);
}

/**
 * What a repository's configs name inside `root` that runs later, for the user's next git there:
 * every file an include names (each condition taken as met, followed wherever it is, as deep as git
 * goes), there or not (one named and missing can be made); and every folder a `core.hooksPath` names
 * in any of them (all of them, not only the last: which one git takes depends on the order of files
 * and includes, and naming more only asks more), relative to `worktree`, where hooks run. `files`:
 * every file read or looked for, for a cache to stat. Paths as written, not through links: see
 * `canonicalNamed`.
 */
export function namedByConfig(
  gitDir: string,
  worktree: string,
  root: string,
  env: GitEnv = process.env,
): { named: string[]; files: string[]; texts: string[] } {
  const files: string[] = [];
  const texts: string[] = [];
  const named = new Set<string>();
  const read = (file: string, depth: number) => {
    if (files.length >= MAX_FILES) return;
    files.push(file);
    let text: string | undefined;
    try {
      text = readText(file);
    } catch {
      // Unreadable (EIO from /proc/self/mem, review g9): named all the same, and nothing else of the
      // call's look at this repository stops on it (its gitlinks, the rest of its configs).
      return;
    }
    if (text === undefined) return;
    texts.push(text);
    for (const e of entries(text).list) {
      if (e.section === "core" && e.sub === undefined && e.key === "hookspath" && e.value) {
        const hooks = includePath(e.value, path.join(worktree, "x"), env); // `~/` as git expands it
        if (hooks !== undefined) named.add(hooks);
      }
      if ((e.section === "include" || e.section === "includeif") && e.key === "path" && e.value) {
        const f = includePath(e.value, file, env);
        if (f === undefined) continue;
        named.add(f);
        if (depth < INCLUDE_DEPTH && !files.includes(f)) read(f, depth + 1);
      }
    }
  };
  for (const f of configFiles(gitDir, env)) read(f, 0);
  return { named: [...named].filter((p) => p !== root && isInside(root, p)), files, texts };
}

/**
 * Where `p` (inside the real folder `root`) really is, as git would reach it: each link on the way
 * followed by hand, dangling ones too (review g8, g9: a named include missing behind `tools/local ->
 * ../scratch`); but a link into `/proc` or `/dev` (`/proc/self/cwd/…`, `/dev/fd/…`) leads elsewhere for
 * latch than for the user's git, so that link itself is the answer (removed when a call made it, a write
 * over it asks: review g9). Undefined when outside `root`, or nowhere git could reach (a loop).
 */
export function canonicalNamed(p: string, root: string): string | undefined {
  let real: string;
  try {
    real = walkBelow(root, path.relative(root, p), (at) => /^\/(proc|dev)(\/|$)/.test(at));
  } catch (err) {
    if (["ENOTDIR", "ELOOP", "EACCES", "ENAMETOOLONG"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
  return real !== root && isInside(root, real) ? real : undefined;
}

/**
 * The git folder git uses for the worktree `root`: its `.git` folder, or where its `.git` file points
 * (a linked worktree, a submodule's checkout, `--separate-git-dir`: maybe outside the workspace).
 */
export function rootGitDir(root: string): string | undefined {
  const dotGit = path.join(root, ".git");
  const text = readText(dotGit, true);
  if (text === undefined) return dotGit; // a folder (readText reads files only), or nothing there
  if (!text.startsWith("gitdir: ")) return undefined;
  return path.resolve(root, text.slice("gitdir: ".length).replace(/[\r\n]+$/, ""));
}

/** runsLaterByConfig's answer per root and environment, with each file it read known by a stat: one stat a file a write. */
const namedSeen = new Map<string, { files: string[]; keys: string[]; named: string[] }>();

function statKey(file: string): string {
  try {
    const st = statSync(osPath(file), { throwIfNoEntry: false });
    if (st === undefined) return "none";
    // Changed too recently for its times to tell a later change apart (racy.ts): equal to no other key.
    if (racy(Date.now(), st.ctimeMs)) return `racy:${performance.now()}:${Math.random()}`;
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch (err) {
    // Nothing git can read either (review g8: a worktree's `.git` is a file, so `.git/config` is ENOTDIR).
    if (["ENOTDIR", "ELOOP", "ENAMETOOLONG", "EACCES"].includes(errnoCode(err) ?? "")) return errnoCode(err)!;
    throw err;
  }
}

/** The config files `files` as they are now (each one's stat): a look kept while this is unchanged. */
export function configStamp(files: readonly string[]): string {
  return files.map(statKey).join("\0");
}

/** The root's `.git` as the cache knows it: a folder by identity (git changes its times at each command), a file by its stat. */
function rootKey(root: string): string {
  const st = lstatSync(osPath(path.join(root, ".git")), { throwIfNoEntry: false });
  return st?.isDirectory() ? `dir:${st.dev}:${st.ino}` : statKey(path.join(root, ".git"));
}

/**
 * What the configs name inside the workspace that runs later (namedByConfig), canonical, for the file
 * tools: a write there asks, as a write to `.git/hooks` does (policy/envelope-eval.ts). The root
 * repository's, and each one on the way from the root down to a written path (review g9: a global
 * `core.hooksPath = .githooks` names `sub/.githooks` for a submodule `sub` too). The configs are read
 * again only when one of them changed (every file-tool write asks this); the links on the way are
 * followed each time.
 */
export function runsLaterByConfig(root: string, env: GitEnv = process.env, targets: readonly string[] = []): string[] {
  const top = hasDotGit(root) ? root : enclosingWorktree(root);
  const worktrees = new Set(top === undefined ? [] : [top]);
  for (const t of targets)
    for (let d = path.dirname(t); d !== root && isInside(root, d); d = path.dirname(d))
      if (hasDotGit(d)) worktrees.add(d);
  const named = new Set([...worktrees].flatMap((w) => asWritten(w, root, env)));
  return [...named].flatMap((p) => [canonicalNamed(p, root) ?? []].flat());
}

/**
 * The worktree of the repository git finds from `root` when `root` holds no `.git` of its own (the
 * workspace a folder of a monorepo): its config may name what runs later inside the workspace too.
 */
export function enclosingWorktree(root: string): string | undefined {
  for (let d = path.dirname(root); ; d = path.dirname(d)) {
    if (hasDotGit(d)) return d;
    if (d === path.dirname(d)) return undefined;
  }
}

/** Whether `dir` holds a `.git` (a folder or a file): a repository's worktree to git. */
function hasDotGit(dir: string): boolean {
  try {
    return lstatSync(osPath(path.join(dir, ".git")), { throwIfNoEntry: false }) !== undefined;
  } catch (err) {
    if (["ENOTDIR", "EACCES", "ELOOP", "ENAMETOOLONG"].includes(errnoCode(err) ?? "")) return false; // nothing git enters either
    throw err;
  }
}

function asWritten(worktree: string, root: string, env: GitEnv): string[] {
  // Per worktree and per environment: two hosts in one process may give git different homes.
  const at = [
    worktree,
    root,
    env.HOME,
    env.XDG_CONFIG_HOME,
    env.GIT_CONFIG_GLOBAL,
    env.GIT_CONFIG_SYSTEM,
    env.GIT_CONFIG_NOSYSTEM,
  ].join("\0");
  const seen = namedSeen.get(at);
  if (
    seen !== undefined &&
    rootKey(worktree) === seen.keys[0] &&
    seen.files.every((f, i) => statKey(f) === seen.keys[i + 1])
  )
    return seen.named;
  const gitDir = rootGitDir(worktree);
  if (gitDir === undefined) return [];
  let found = namedByConfig(gitDir, worktree, root, env);
  // The stats taken between two reads that agree: a file changed after its read and before its stat
  // would otherwise be kept as read (an include's stat cannot come first: it is named by the read).
  let keys: string[] | undefined;
  for (let tries = 0; tries < 3 && keys === undefined; tries++) {
    const taken = [rootKey(worktree), ...[path.join(gitDir, "commondir"), ...found.files].map(statKey)];
    const again = namedByConfig(gitDir, worktree, root, env);
    if (again.texts.join("\0") === found.texts.join("\0") && again.files.join("\0") === found.files.join("\0"))
      keys = taken;
    found = again;
  }
  if (namedSeen.size > 256) namedSeen.clear(); // one entry per repository a write went through: bounded
  if (keys !== undefined)
    namedSeen.set(at, { files: [path.join(gitDir, "commondir"), ...found.files], keys, named: found.named });
  else namedSeen.delete(at); // changing under each read: read again next time
  return found.named;
}

/** Config keys whose value git runs as a command, or that pull in more config (and so anything). */
const COMMAND_KEY_SUFFIX =
  /\.(command|cmd|textconv|process|program|driver|editor|helper|hookspath|sshcommand|pager|askpass|gitproxy|fsmonitor|clean|smudge|external|uploadpack|receivepack|packobjectshook|difffilter|path|update|browser|viewer|smtpserver|vcs|defaultkeycommand|allow)$/;
const COMMAND_KEY_PREFIX =
  /^(alias|pager|include|includeif|filter|credential|protocol|difftool|mergetool|man|browser|gpg|sendemail|instaweb|trailer|submodule|remote|diff|merge|core\.hook|uploadpack|ssh)\./;

/**
 * Keys of the sections COMMAND_KEY_PREFIX names whole that run nothing: what `git remote add` and
 * `git submodule add` write (their URLs are checked apart: `ext::` runs a command).
 */
const PLAIN_KEY =
  /^(remote\.[^\n]+\.(url|pushurl|fetch|push|tagopt|mirror|prune)|submodule\.[^\n]+\.(url|active|branch))$/;

/** The config key of `key=value` (or a bare key) when git would run its value as a command. */
export function gitCommandKey(keyValue: string): string | undefined {
  const key = keyValue.split("=")[0].toLowerCase();
  if (key === "") return undefined;
  return COMMAND_KEY_SUFFIX.test(key) || COMMAND_KEY_PREFIX.test(key) || /^(core|sequence)\.editor$/.test(key)
    ? key
    : undefined;
}

/** Does setting `key` to `value` make git run a program? (a URL of the `ext::` transport does) */
export function configKeyRunsProgram(key: string, value?: string): boolean {
  if (value !== undefined && /^(ext|fd)::/i.test(value)) return true;
  return !PLAIN_KEY.test(key) && gitCommandKey(key) !== undefined;
}
