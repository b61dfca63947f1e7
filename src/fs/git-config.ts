// Reading a git config as git reads it (config.c), for what latch must know of one: the object format
// of an index and a submodule's worktree (sandbox/gitlinks.ts), and what a config names that runs
// later: its `core.hooksPath` folder and the files it includes, which the user may keep in the
// workspace (`.githooks`, `include.path = ../tools/gitconfig`) and the model could rewrite (reviews g5,
// g6, g7). Where latch read a value otherwise than git (a comment mark inside quotes, an escape), the
// model chose what latch saw.
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { isInside } from "./paths.js";
import { osPath } from "./names.js";

/** One `key = value` of a config: section and key lowercased, the subsection as written. */
interface Entry {
  section: string;
  sub?: string;
  key: string;
  /** The value as git takes it (quotes and escapes undone, comments dropped); null: one git refuses. */
  value: string | null;
}

const HEADER = /^\[([A-Za-z0-9.-]+)(\s+"((?:[^"\\]|\\.)*)")?\]\s*(.*)$/;
const KEY = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/;

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
    for (const c of line.replace(/^\s*\[[^\]]*\]/, "")) {
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
    list.push({ section, sub, key: kv[1].toLowerCase(), value });
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
    return fstatSync(fd).isFile() ? readFileSync(fd, "utf8") : undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * What the config `file` names inside `root` that runs later: the files it includes (and they, in
 * turn: at most 16 files, as git stops at its own depth), each relative to the file naming it, there or
 * not (one named and missing can be made); and the folder `core.hooksPath` names in any of them (the
 * last one set, relative to `worktree`, where hooks run). A home path (`~`) is outside the workspace.
 */
export function namedByConfig(
  file: string,
  worktree: string,
  root: string,
): { includes: string[]; hooks?: string; texts: string[] } {
  const files = [file];
  const texts: string[] = [];
  for (let i = 0; i < files.length && files.length <= 16; i++) {
    const text = readText(files[i]);
    if (text === undefined) continue;
    texts.push(text);
    for (const named of configIncludes(text)) {
      if (named === "" || named.startsWith("~") || named.startsWith("%(")) continue; // outside: read-only in the box
      const f = path.resolve(path.dirname(files[i]), named);
      if (isInside(root, f) && !files.includes(f)) files.push(f);
    }
  }
  const hooks = configValue(texts.join("\n"), "core", "hookspath");
  const usable = typeof hooks === "string" && hooks !== "" && !hooks.startsWith("~");
  return { includes: files.slice(1), texts, ...(usable ? { hooks: path.resolve(worktree, hooks) } : {}) };
}

/** runsLaterByConfig's answer per root, with each file it read known by a stat: one stat a file a write. */
const namedSeen = new Map<string, { files: string[]; keys: string[]; named: string[] }>();

function statKey(file: string): string {
  const st = statSync(osPath(file), { throwIfNoEntry: false });
  return st === undefined ? "none" : `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/**
 * What the root repository's config names inside the workspace that runs later (namedByConfig), for
 * the file tools: a write there asks, as a write to `.git/hooks` does (policy/envelope-eval.ts). Read
 * again only when the config or a file it includes changed (every file-tool write asks this).
 */
export function runsLaterByConfig(root: string): string[] {
  const seen = namedSeen.get(root);
  if (seen !== undefined && seen.files.every((f, i) => statKey(f) === seen.keys[i])) return seen.named;
  const config = path.join(root, ".git", "config");
  let found = namedByConfig(config, root, root);
  // The stats taken between two reads that agree: a file changed after its read and before its stat
  // would otherwise be kept as read (an include's stat cannot come first: it is named by the read).
  let keys: string[] | undefined;
  for (let tries = 0; tries < 3 && keys === undefined; tries++) {
    const files = [config, ...found.includes];
    const taken = files.map(statKey);
    const again = namedByConfig(config, root, root);
    if (again.texts.join("\0") === found.texts.join("\0") && again.includes.join("\0") === found.includes.join("\0"))
      keys = taken;
    found = again;
  }
  const named = [...found.includes, ...(found.hooks !== undefined && isInside(root, found.hooks) ? [found.hooks] : [])];
  if (keys !== undefined) namedSeen.set(root, { files: [config, ...found.includes], keys, named });
  else namedSeen.delete(root); // changing under each read: read again next time
  return named;
}
