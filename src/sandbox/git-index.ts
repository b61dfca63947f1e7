// Reading what git reads, as git reads it, for gitlinks.ts: an index file's gitlinks (versions 2 to
// 4, split indexes, sha1 and sha256), and the two config values that decide how (the object format)
// and where (a submodule's worktree). Where latch read differently from git (an object format taken
// from any section), the model chose what latch saw (review g3: a sha1 index read as sha256 lost 12
// bytes of each name, `node_modules/x` became `/x`, and the repository there went unguarded).
import { bytesToInternal, showName } from "../fs/names.js";

const GITLINK = 0o160000;

/** What an index holds for gitlinks.ts. */
export interface IndexGitlinks {
  /** The gitlinks' paths ("" for an entry of a split index that takes its name from the shared one). */
  links: string[];
  /** Every path under a node_modules folder, when asked for (a split index's shared file). */
  skipped: string[];
  /** The shared index's name (hex), when the index is split (`git update-index --split-index`). */
  shared?: string;
}

/**
 * The gitlinks of an index file (git's Documentation/gitformat-index.txt). An index latch cannot read
 * is an error that names it: taken for one with no gitlinks, it would leave one unguarded.
 */
export function parseIndex(b: Buffer, hashLen: number, name: string, wantSkipped = false): IndexGitlinks {
  const bad = (why: string) =>
    new Error(
      `latch cannot read the git index ${showName(name)} (${why}), so it cannot see the folders git enters as ` +
        `submodules; git cannot read it either. If the repository is yours, move the index aside and rebuild it ` +
        `(\`git reset\` there).`,
    );
  if (b.length < 12 || b.toString("latin1", 0, 4) !== "DIRC") throw bad("no DIRC signature");
  const version = b.readUInt32BE(4);
  if (version < 2 || version > 4) throw bad(`version ${version}`);
  const count = b.readUInt32BE(8);
  const out: IndexGitlinks = { links: [], skipped: [] };
  const end = readEntries(b, 12, count, version, hashLen, wantSkipped, out, bad);
  // git may read the entries otherwise: with index.threads (by default, on 3 cores or more, for a large
  // index) and an EOIE extension at the end, block by block at the offsets an IEOT extension gives, a
  // version 4 name starting afresh at each (read-cache.c load_cache_entries_threaded). An index can
  // say other offsets than where entries end one after another (review g44: a gitlink inside entry
  // `a`'s name bytes, reached by git through IEOT): every block it names is read too.
  // A block latch cannot read is skipped, not thrown: git (which checks EOIE's hash, as latch does not)
  // may not use the IEOT at all, and would then read what the sequential read saw; one it does use
  // and cannot read makes it refuse the index. What a block gave before it failed is kept.
  for (const [from, n] of ieotBlocks(b, hashLen)) {
    try {
      readEntries(b, from, n, version, hashLen, wantSkipped, out, bad);
    } catch {
      continue;
    }
  }
  if (out.links.length > 1) out.links = [...new Set(out.links)];
  out.shared = sharedIndex(b, end, hashLen);
  return out;
}

/** `count` entries from `at` into `out`; where they end. */
function readEntries(
  b: Buffer,
  at: number,
  count: number,
  version: number,
  hashLen: number,
  wantSkipped: boolean,
  out: IndexGitlinks,
  bad: (why: string) => Error,
): number {
  const fixed = 40 + hashLen + 2; // times, ids and mode, the object id, the flags
  // Version 4's names are each the previous one's start and a suffix: built in one buffer, no copy each.
  let current = Buffer.alloc(4096);
  let length = 0;
  // A name's length is its flags' low 12 bits, as git reads it (read-cache.c create_from_disk), and the
  // NUL only where those say 0xFFF (longer): each entry's size follows from it. Read to the first NUL
  // instead, a name `a\0zzzzzz` with length 8 moved latch 8 bytes short of git, and every later entry
  // it read was another than git's: a gitlink git enters went unseen (review g43). The path git uses
  // is the name up to its first NUL.
  for (let i = 0; i < count; i++) {
    if (at + fixed > b.length) throw bad("cut short");
    const mode = b.readUInt32BE(at + 24);
    // Extended flags are read in any version, as git reads them (review g4: a version 2 entry with the
    // flag set had its name read from the flags' two bytes, "", and was dropped).
    const flags = b.readUInt16BE(at + 40 + hashLen);
    const extended = (flags & 0x4000) !== 0;
    const start = at + fixed + (extended ? 2 : 0);
    const named = flags & 0x0fff;
    let nameBytes: Buffer;
    if (version === 4) {
      // How many bytes of the previous name to drop (git's varint), then the rest, NUL-ended.
      let p = start;
      let c = b[p++];
      let drop = c & 127;
      while (c & 128) {
        c = b[p++];
        drop = (drop + 1) * 128 + (c & 127);
      }
      if (drop > length) throw bad("a name cut short");
      const keep = length - drop;
      const nul = b.indexOf(0, p);
      const len = named === 0x0fff ? (nul < 0 ? -1 : keep + nul - p) : named;
      const end = p + len - keep;
      if (len < keep || end >= b.length) throw bad("a name cut short");
      length = len;
      if (length > current.length) current = Buffer.concat([current.subarray(0, keep), Buffer.alloc(length * 2)]);
      b.copy(current, keep, p, end);
      nameBytes = current.subarray(0, length);
      at = end + 1;
    } else {
      const len = named === 0x0fff ? b.indexOf(0, start) - start : named;
      if (len < 0 || start + len > b.length) throw bad("a name cut short");
      nameBytes = b.subarray(start, start + len);
      at += (fixed + (extended ? 2 : 0) + len + 8) & ~7;
    }
    const nul = nameBytes.indexOf(0);
    if (nul >= 0) nameBytes = nameBytes.subarray(0, nul);
    if ((mode & 0o170000) === GITLINK) out.links.push(bytesToInternal(nameBytes));
    if (wantSkipped && nameBytes.includes("node_modules")) out.skipped.push(bytesToInternal(nameBytes));
  }
  return at;
}

/**
 * The IEOT extension's blocks (offset, entries), found as git finds it: through the EOIE extension,
 * the last before the checksum, which gives where the extensions start. None without both.
 */
function ieotBlocks(b: Buffer, hashLen: number): [number, number][] {
  // 32 bytes before the checksum in either format, its size 24 (read-cache.c EOIE_SIZE: a 20-byte hash
  // field even in sha256, whose hash runs on into the checksum): review g45, where latch looked at
  // `hashLen`'s own layout and never found git's in a sha256 repository.
  const eoie = b.length - hashLen - 32;
  if (eoie < 12 || b.toString("latin1", eoie, eoie + 4) !== "EOIE" || b.readUInt32BE(eoie + 4) !== 24) return [];
  let at = b.readUInt32BE(eoie + 8);
  while (at >= 12 && at + 8 <= eoie) {
    const size = b.readUInt32BE(at + 4);
    if (b.toString("latin1", at, at + 4) === "IEOT") {
      const blocks: [number, number][] = [];
      for (let p = at + 12; p + 8 <= Math.min(at + 8 + size, eoie); p += 8)
        blocks.push([b.readUInt32BE(p), b.readUInt32BE(p + 4)]);
      return blocks;
    }
    at += 8 + size;
  }
  return [];
}

/** The `link` extension's shared index name (hex), after the entries; undefined when the index is not split. */
function sharedIndex(b: Buffer, at: number, hashLen: number): string | undefined {
  while (at + 8 <= b.length - hashLen) {
    const sig = b.toString("latin1", at, at + 4);
    const size = b.readUInt32BE(at + 4);
    if (sig === "link") return b.toString("hex", at + 8, at + 8 + hashLen);
    at += 8 + size;
  }
  return undefined;
}
