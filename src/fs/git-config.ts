// Reading a git config as git reads it, for what latch must know of one: the object format of an
// index (sandbox/gitlinks.ts), a submodule's worktree, and `core.hooksPath`, a folder of hooks the user
// keeps in the workspace, which the file tools treat as what runs later (policy/envelope-eval.ts).
import { fstatSync, openSync, closeSync, readFileSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { osPath } from "./names.js";

/**
 * The value of `section.key` in a git config's text, the last one set (as git takes it): sections by
 * name, case aside (`[extensions]`, not `[foo]`; a subsection's `[core "x"]` is another section);
 * keys case aside; a value unquoted, comments dropped. `undefined` when it is not set; `null` when a
 * line is one this reader does not follow (a continuation, an unclosed quote), which the caller must
 * not take for "not set".
 */
export function configValue(text: string, section: string, key: string): string | undefined | null {
  let current: string | undefined;
  let value: string | undefined;
  // A line ending in a backslash goes on in the next (git joins them), comments and quotes aside.
  const lines = text.replace(/\\\r?\n/g, "").split("\n");
  for (let line of lines) {
    line = line.trim();
    const header = /^\[([A-Za-z0-9.-]+)(\s+"(?:[^"\\]|\\.)*")?\]\s*(.*)$/.exec(line);
    if (header) {
      current = header[2] === undefined ? header[1].toLowerCase() : undefined;
      line = header[3];
    }
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv) return null;
    if (current !== section || kv[1].toLowerCase() !== key) continue;
    const raw = (kv[2] ?? "true").replace(/\s+[#;].*$/, "");
    if ((raw.match(/"/g)?.length ?? 0) % 2 === 1) return null;
    value = raw.replace(/"/g, "").trim();
  }
  return value;
}

/**
 * The files a git config includes (`[include] path`, `[includeIf "…"] path`, every condition taken as
 * met), as written: a config can share settings from a file in the workspace, which the model could
 * then rewrite (review g6: `include.path = ../tools/gitconfig`, and core.fsmonitor added there).
 */
export function configIncludes(text: string): string[] {
  const out: string[] = [];
  let including = false;
  for (let line of text.replace(/\\\r?\n/g, "").split("\n")) {
    line = line.trim();
    const header = /^\[([A-Za-z0-9.-]+)(\s+"(?:[^"\\]|\\.)*")?\]\s*(.*)$/.exec(line);
    if (header) {
      including = ["include", "includeif"].includes(header[1].toLowerCase());
      line = header[3];
    }
    const kv = including ? /^path\s*=\s*(.*)$/i.exec(line) : null;
    if (kv)
      out.push(
        kv[1]
          .replace(/\s+[#;].*$/, "")
          .replace(/"/g, "")
          .trim(),
      );
  }
  return out;
}

/** The root repository's hooks folder by its config's identity: one fstat a write, one read a change. */
const hooksSeen = new Map<string, { key: string; folder: string | undefined }>();

/**
 * The folder `core.hooksPath` names in the root repository's config (`.git/config` under `root`),
 * relative to the root, where hooks run; undefined when unset, a home path (`~`: outside), or when there
 * is no config. Hooks kept so in the workspace run at the user's next commit or checkout (review g5).
 */
export function hooksFolder(root: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(osPath(path.join(root, ".git", "config")), "r");
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "EACCES", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    const seen = hooksSeen.get(root);
    if (seen?.key === key) return seen.folder;
    const set = configValue(readFileSync(fd, "utf8"), "core", "hookspath");
    const folder = typeof set === "string" && set !== "" && !set.startsWith("~") ? path.resolve(root, set) : undefined;
    hooksSeen.set(root, { key, folder });
    return folder;
  } finally {
    closeSync(fd);
  }
}
