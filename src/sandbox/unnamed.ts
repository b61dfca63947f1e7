// Below the entries whose names are not valid UTF-8 (secrets.ts lists them, `unnamed`): what the
// text walk would have found there, as byte paths. A contained process can make such a folder
// (`mkdir $'\xff'`) and in it what runs later (an `.envrc`, a repository with `core.fsmonitor`) that a
// walk by text names never sees: Node turns the name into U+FFFD, a path that does not exist. Node's
// fs takes a Buffer for a path, so this walk reads names as bytes and keeps paths as bytes.
//
// The walk is not cached: such names are rare in a workspace, and each one costs this walk only at a
// contained process's start and at the guard's baseline and check.
import { isUtf8 } from "node:buffer";
import { lstatSync, readdirSync, realpathSync, type Stats } from "node:fs";
import { envelopeGlob } from "../fs/glob.js";
import { bytesToInternal, showName } from "../fs/names.js";
import { RUNS_LATER } from "../fs/protected.js";
import { quarantineGlob } from "../fs/quarantine.js";

const RUNS_LATER_NAMES: ReadonlySet<string> = new Set(RUNS_LATER.filter((n) => !n.includes("/")));
/** As secrets.ts: git's store and the package manager's copy are not entered. */
const SKIP: ReadonlySet<string> = new Set([".git", "node_modules"]);
const SLASH = Buffer.from("/");

/** What lies at or below the unnamed entries, as secrets.ts sorts it; each path absolute, as bytes. */
export interface UnnamedScan {
  secrets: Buffer[];
  denied: Buffer[];
  gitDirs: Buffer[];
  gitFiles: Buffer[];
  runsLater: Buffer[];
}

export function joinBytes(dir: Buffer, name: string | Buffer): Buffer {
  return Buffer.concat([dir, SLASH, typeof name === "string" ? Buffer.from(name) : name]);
}

/** A byte path as latch shows any name (src/fs/names.ts: `\xff` for a byte that is not UTF-8), which bash's `$'…'` reads back. */
export function showBytes(p: Buffer): string {
  return showName(bytesToInternal(p));
}

function lstat(p: Buffer): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** A link whose target the quarantine covers (the OS's realpath, as secrets.ts). */
function leadsToSecret(link: Buffer): boolean {
  try {
    return quarantineGlob(realpathSync.native(link, { encoding: "buffer" }).toString("utf8")) !== undefined;
  } catch {
    return false;
  }
}

/**
 * Everything secrets.ts's walk would list at and below each of `entries` (absolute byte paths under
 * the canonical `root`), with `denied` the same envelope globs. A name is matched by its text with
 * U+FFFD for what is not UTF-8 (quarantine and RUNS_LATER names are ASCII: `\xff/.env` is `�/.env`).
 */
export function scanUnnamed(root: string, entries: readonly Buffer[], denied: readonly string[] = []): UnnamedScan {
  const out: UnnamedScan = { secrets: [], denied: [], gitDirs: [], gitFiles: [], runsLater: [] };
  if (entries.length === 0) return out;
  const tests = denied.map((g) => envelopeGlob(g));
  const rootText = root === "/" ? "" : root;
  const stack: { abs: Buffer; name: Buffer }[] = entries.map((abs) => ({
    abs,
    name: abs.subarray(abs.lastIndexOf(0x2f) + 1),
  }));
  while (stack.length > 0) {
    const { abs, name: nameBytes } = stack.pop()!;
    const st = lstat(abs);
    if (!st) continue; // gone since its folder was read
    const name = nameBytes.toString("utf8");
    const text = abs.toString("utf8");
    const isDir = st.isDirectory();
    if (RUNS_LATER_NAMES.has(name)) out.runsLater.push(abs);
    if (name === ".git") (isDir ? out.gitDirs : out.gitFiles).push(abs);
    else if (quarantineGlob(text) !== undefined || (st.isSymbolicLink() && leadsToSecret(abs))) out.secrets.push(abs);
    else if (tests.length > 0 && tests.some((t) => t(text) || t(text.slice(rootText.length + 1)))) out.denied.push(abs);
    else if (isDir && !SKIP.has(name)) {
      let names: Buffer[];
      try {
        names = readdirSync(abs, { encoding: "buffer" });
      } catch {
        continue; // unreadable: a contained process (the same user) cannot list it either
      }
      for (const n of names) stack.push({ abs: joinBytes(abs, n), name: n });
    }
  }
  return out;
}

/**
 * Why a contained process cannot start over this workspace, if it cannot: bwrap takes its mounts'
 * paths as text, so a secret or denied path below a name that is not UTF-8 cannot be masked, nor (for
 * a writable workspace) a repository's git folder, a `.git` file or a RUNS_LATER entry there be kept
 * read-only (masks.ts keeps each of those read-only below a UTF-8 name). The fix named
 * is a rename; refusing keeps the secret unread and the repository's config unwritten.
 */
export function unmaskable(root: string, odd: UnnamedScan, writable: boolean): string | undefined {
  const hidden = [...odd.secrets, ...odd.denied];
  const kept = writable ? [...odd.gitDirs, ...odd.gitFiles, ...odd.runsLater] : [];
  const first = hidden[0] ?? kept[0];
  if (first === undefined) return undefined;
  const rel = relativeBytes(root, first);
  const what =
    hidden.length > 0
      ? `mask \`${showBytes(rel)}\` (a secret or a path the envelope denies)`
      : `keep \`${showBytes(rel)}\` read-only (git, an editor or a shell runs what it says)`;
  return (
    `latch cannot ${what} in the sandbox: a name on its path is not valid UTF-8, and bwrap's mounts take ` +
    `paths as text. Rename that folder to a UTF-8 name (in bash: mv $'${showBytes(oddPrefix(rel))}' NEW_NAME), ` +
    `then run the command again.`
  );
}

/** `p` (absolute, under the canonical `root`) relative to it. */
export function relativeBytes(root: string, p: Buffer): Buffer {
  return p.subarray(Buffer.byteLength(root === "/" ? "" : root) + 1);
}

/** `rel` up to its first part that is not valid UTF-8 (all of it if none is). */
function oddPrefix(rel: Buffer): Buffer {
  let start = 0;
  for (let i = 0; i <= rel.length; i++) {
    if (i < rel.length && rel[i] !== 0x2f) continue;
    if (!isUtf8(rel.subarray(start, i))) return rel.subarray(0, i);
    start = i + 1;
  }
  return rel;
}
