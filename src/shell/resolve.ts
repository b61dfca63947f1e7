// Where a program name leads: a name is looked up on the PATH captured at startup, a word with a
// slash is taken relative to the cwd; either way the answer is the canonical (realpath) file, so
// `./rm`, a symlink named `ls` or `/usr/bin/../bin/rm` are all seen for what they are.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { realpathOf } from "../fs/realpath.js";

/** The canonical path of the program `word` names, or undefined when none is found. */
export async function resolveProgram(
  word: string,
  cwd: string,
  pathDirs: readonly string[],
): Promise<string | undefined> {
  return resolveProgramSync(word, cwd, pathDirs);
}

/** resolveProgram without the promise: every lookup here is synchronous (see executableAt). */
export function resolveProgramSync(word: string, cwd: string, pathDirs: readonly string[]): string | undefined {
  if (word === "" || word.includes("\0")) return undefined;
  if (word.includes("/")) return executableAt(path.resolve(cwd, word));
  return lookUp(word, pathDirs);
}

function lookUp(name: string, pathDirs: readonly string[]): string | undefined {
  for (const dir of pathDirs) {
    const found = executableAt(path.join(dir, name));
    if (found) return found;
  }
  return undefined;
}

/**
 * The realpath of an executable regular file at `p`, or undefined. Synchronous, and a miss costs no
 * exception: every plan looks each configured name up in every PATH folder, and the promise calls with
 * a thrown ENOENT per miss cost ~20 ms a command line (bench/shell-policy.ts).
 */
function executableAt(p: string): string | undefined {
  try {
    if (statSync(p, { throwIfNoEntry: false }) === undefined) return undefined;
    const real = realpathOf(p);
    if (!statSync(real).isFile()) return undefined;
    accessSync(real, constants.X_OK);
    return real;
  } catch (err) {
    // Not there, not a file we may run: the lookup moves on, as the shell's would.
    if (["ENOENT", "ENOTDIR", "EACCES", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
}

/**
 * A PATH folder's mtime, or -1 where it is absent or may not be looked at: a PATH inherited from
 * another user (`/root/.cargo/bin` under sudo) holds folders this user cannot stat, which the lookup
 * skips as a shell does.
 */
function folderStamp(d: string): number {
  try {
    return statSync(d, { throwIfNoEntry: false })?.mtimeMs ?? -1;
  } catch (err) {
    if (["EACCES", "ENOTDIR", "ELOOP"].includes(errnoCode(err) ?? "")) return -1;
    throw err;
  }
}

/** A configured command list entry: a bare name (looked up on the PATH) or an absolute path. */
export interface CommandEntry {
  readonly entry: string;
  /** The name the entry is known by (its basename). */
  readonly name: string;
  /** Its canonical file, when one exists: resolved when first read, once per plan. */
  readonly real?: string;
}

/**
 * The configured entries resolved on PATH. Every plan needs them, and looking ~25 names up in ~11 PATH
 * folders is ~250 stat calls (bench/shell-policy.ts). So where each name was found is kept while the
 * folders searched keep their mtimes (installing, removing or renaming a program changes them), for at
 * most a second; the found file is still resolved (realpath, executable) on every call, so a retargeted
 * link or a chmod is seen at once.
 */
export async function resolveEntries(entries: readonly string[], pathDirs: readonly string[]): Promise<CommandEntry[]> {
  const found = whereFound(entries, pathDirs);
  return entries.map((entry, i) => lazyEntry(entry, found[i], pathDirs));
}

/**
 * An entry whose file is resolved (realpath, executable) only when a check reads it: a line names a
 * few programs, the lists hold ~25, and resolving them all was a quarter of a plan's time
 * (bench/shell-policy.ts). Read once, it is kept for the rest of this plan; the next plan resolves again.
 */
function lazyEntry(entry: string, where: string | undefined, pathDirs: readonly string[]): CommandEntry {
  let real: string | undefined;
  let resolved = where === undefined;
  return {
    entry,
    name: path.basename(entry),
    get real() {
      if (!resolved) {
        real = executableAt(where!) ?? resolveEntry(entry, pathDirs);
        resolved = true;
      }
      return real;
    },
  };
}

/** The canonical file of one entry, looked up now. */
function resolveEntry(entry: string, pathDirs: readonly string[]): string | undefined {
  if (path.isAbsolute(entry)) return executableAt(entry);
  return entry.includes("/") ? undefined : lookUp(entry, pathDirs);
}

/** For each entry, the path it was found at on PATH (or its own absolute path), or undefined: kept while valid. */
function whereFound(entries: readonly string[], pathDirs: readonly string[]): readonly (string | undefined)[] {
  const key = `${entries.join("\0")}\n${pathDirs.join("\0")}`;
  const dirs = [...pathDirs, ...entries.filter((e) => path.isAbsolute(e)).map((e) => path.dirname(e))];
  const stamp = dirs.map(folderStamp).join(",");
  const kept = found.get(key);
  if (kept && kept.stamp === stamp && performance.now() - kept.at < KEEP_MS) return kept.where;
  const where = entries.map((e) =>
    path.isAbsolute(e)
      ? e
      : e.includes("/")
        ? undefined
        : pathDirs.map((d) => path.join(d, e)).find((p) => executableAt(p) !== undefined),
  );
  if (found.size >= 64) found.clear(); // a few configs per process at most; never grows without bound
  found.set(key, { stamp, at: performance.now(), where });
  return where;
}

const KEEP_MS = 1000;
const found = new Map<string, { stamp: string; at: number; where: readonly (string | undefined)[] }>();

/**
 * Is the program allowlisted? Its canonical file must be an entry's, and the name it is run by must be
 * the entry's name or the file's own, so a multi-call binary (busybox) allowed as `ls` is not `rm`.
 */
export function allowedEntry(word: string, real: string, allowed: readonly CommandEntry[]): CommandEntry | undefined {
  const invoked = path.basename(word);
  // The entries of that name first: for a program allowed by name, no other entry is resolved.
  const byName = allowed.find((a) => a.name === invoked && a.real === real);
  if (byName || invoked !== path.basename(real)) return byName;
  return allowed.find((a) => a.real === real);
}

/** Is the program denied? By the word itself, its basename, or its canonical file (and that file's name). */
export function deniedEntry(
  word: string,
  real: string | undefined,
  denied: readonly CommandEntry[],
): CommandEntry | undefined {
  const names = new Set([word, path.basename(word)]);
  if (real) names.add(path.basename(real));
  const byName = denied.find((d) => names.has(d.entry) || names.has(d.name));
  return byName ?? (real === undefined ? undefined : denied.find((d) => d.real === real));
}
