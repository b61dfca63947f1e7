// Reading what git reads, as git reads it, for gitlinks.ts: an index file's gitlinks (versions 2 to
// 4, split indexes, sha1 and sha256), and the two config values that decide how (the object format)
// and where (a submodule's worktree). Where latch read differently from git (an object format taken
// from any section), the model chose what latch saw (review g3: a sha1 index read as sha256 lost 12
// bytes of each name, `node_modules/x` became `/x`, and the repository there went unguarded).
import { bytesToInternal, showName } from "../fs/names.js";
import { IndexBytes } from "./index-bytes.js";
import { mayBeNotWalked } from "./not-walked.js";

const GITLINK = 0o160000;

/** What an index holds for gitlinks.ts. */
export interface IndexGitlinks {
  /** The gitlinks' paths ("" for an entry of a split index that takes its name from the shared one). */
  links: string[];
  /** Every path that may be below a folder the walks do not enter (not-walked.ts), when asked for (a split index's shared file). */
  skipped: string[];
  /** The shared index's name (hex), when the index is split (`git update-index --split-index`). */
  shared?: string;
}

/** The longest name latch follows: git's paths end far sooner (PATH_MAX), and a version 4 name grows from the last. */
const MAX_NAME = 1 << 20;

/**
 * The gitlinks of an index file (git's Documentation/gitformat-index.txt), read where git reads:
 * the header, the entries, the extensions' headers, and the payloads of the two it needs (IEOT,
 * link). An index latch cannot read is an error that names it: taken for one with no gitlinks, it would
 * leave one unguarded.
 */
export function parseIndex(
  from: Buffer | IndexBytes,
  hashLen: number,
  name: string,
  wantSkipped = false,
): IndexGitlinks {
  const r = Buffer.isBuffer(from) ? IndexBytes.of(from) : from;
  const bad = (why: string) =>
    new Error(
      `latch cannot read the git index ${showName(name)} (${why}), so it cannot see the folders git enters as ` +
        `submodules; git cannot read it either. If the repository is yours, move the index aside and rebuild it ` +
        `(\`git reset\` there).`,
    );
  const head = r.view(0, 12);
  if (head.length < 12 || head.toString("latin1", 0, 4) !== "DIRC") throw bad("no DIRC signature");
  const version = head.readUInt32BE(4);
  if (version < 2 || version > 4) throw bad(`version ${version}`);
  const count = head.readUInt32BE(8);
  const out: IndexGitlinks = { links: [], skipped: [] };
  const end = readEntries(r, 12, count, version, hashLen, wantSkipped, out, bad);
  // git may read the entries otherwise: with index.threads (by default, on 3 cores or more, for a large
  // index) and an EOIE extension at the end, block by block at the offsets an IEOT extension gives, a
  // version 4 name starting afresh at each (read-cache.c load_cache_entries_threaded). An index can
  // say other offsets than where entries end one after another (review g44: a gitlink inside entry
  // `a`'s name bytes, reached by git through IEOT): every block it names is read too, up to the
  // header's count in all (git keeps that many, in block order).
  // A block latch cannot read is skipped, not thrown: git (which checks EOIE's hash, as latch does not)
  // may not use the IEOT at all, and would then read what the sequential read saw; one it does use
  // and cannot read makes it refuse the index. What a block gave before it failed is kept.
  for (const [from, n] of ieotBlocks(r, hashLen, count, bad)) {
    try {
      readEntries(r, from, n, version, hashLen, wantSkipped, out, bad);
    } catch {
      continue;
    }
  }
  if (out.links.length > 1) out.links = [...new Set(out.links)];
  out.shared = sharedIndex(r, end, hashLen, bad);
  return out;
}

/** `count` entries from `at` into `out`; where they end. */
function readEntries(
  r: IndexBytes,
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
    const e = r.view(at, fixed + 2);
    if (e.length < fixed) throw bad("cut short");
    const mode = e.readUInt32BE(24);
    // Extended flags are read in any version, as git reads them (review g4: a version 2 entry with the
    // flag set had its name read from the flags' two bytes, "", and was dropped).
    const flags = e.readUInt16BE(40 + hashLen);
    const extended = (flags & 0x4000) !== 0;
    const start = at + fixed + (extended ? 2 : 0);
    const named = flags & 0x0fff;
    let nameBytes: Buffer;
    if (version === 4) {
      // How many bytes of the previous name to drop (git's varint), then the rest, NUL-ended.
      const v = r.view(start, 16);
      let p = 0;
      let c = v[p++];
      let drop = c & 127;
      while (c & 128) {
        if (p >= v.length) throw bad("a name cut short");
        c = v[p++];
        drop = (drop + 1) * 128 + (c & 127);
      }
      if (drop > length) throw bad("a name cut short");
      const keep = length - drop;
      const from = start + p;
      const len = named === 0x0fff ? keep + nulAt(r, from, bad) - from : named;
      const end = from + len - keep;
      if (len < keep || end >= r.size) throw bad("a name cut short");
      if (len > MAX_NAME) throw bad(`a name longer than ${MAX_NAME} bytes`);
      length = len;
      if (length > current.length) current = Buffer.concat([current.subarray(0, keep), Buffer.alloc(length * 2)]);
      r.view(from, end - from).copy(current, keep, 0, end - from);
      nameBytes = current.subarray(0, length);
      at = end + 1;
    } else {
      const len = named === 0x0fff ? nulAt(r, start, bad) - start : named;
      if (len < 0 || start + len > r.size) throw bad("a name cut short");
      if (len > MAX_NAME) throw bad(`a name longer than ${MAX_NAME} bytes`);
      nameBytes = r.view(start, len).subarray(0, len);
      at += (fixed + (extended ? 2 : 0) + len + 8) & ~7;
    }
    const nul = nameBytes.indexOf(0);
    if (nul >= 0) nameBytes = nameBytes.subarray(0, nul);
    if ((mode & 0o170000) === GITLINK) out.links.push(bytesToInternal(nameBytes));
    if (wantSkipped && mayBeNotWalked(nameBytes)) out.skipped.push(bytesToInternal(nameBytes));
  }
  return at;
}

/** Where the first NUL from `from` is; -1 when the file ends first. A name past MAX_NAME is not followed. */
function nulAt(r: IndexBytes, from: number, bad: (why: string) => Error): number {
  for (let p = from; ;) {
    const w = r.view(p, 1);
    if (w.length === 0) return -1;
    const i = w.indexOf(0);
    if (i >= 0) return p + i;
    p += w.length;
    if (p - from > MAX_NAME) throw bad(`a name longer than ${MAX_NAME} bytes`);
  }
}

/** The most extensions latch walks: git writes a handful. */
const MAX_EXTENSIONS = 1000;

/**
 * The extensions from `at` to `stop`, each's header alone read. Past MAX_EXTENSIONS the index is not
 * followed: a run of zeros reads as extensions of no payload, eight bytes each, and a reading with the
 * other object format's length walked 1.6 GB of them in 26 s.
 */
function* extensions(
  r: IndexBytes,
  at: number,
  stop: number,
  bad: (why: string) => Error,
): Generator<{ at: number; sig: string; size: number }> {
  for (let n = 0; at + 8 <= stop; n++) {
    if (n === MAX_EXTENSIONS) throw bad(`more than ${MAX_EXTENSIONS} extensions`);
    const h = r.view(at, 8);
    if (h.length < 8) return;
    const size = h.readUInt32BE(4);
    yield { at, sig: h.toString("latin1", 0, 4), size };
    at += 8 + size;
  }
}

/** The most IEOT blocks latch follows: git writes one for each thread that reads the index. */
const MAX_BLOCKS = 65_536;

/**
 * The IEOT extension's blocks (offset, entries), found as git finds it: through the EOIE extension,
 * the last before the checksum, which gives where the extensions start. None without both. Their
 * entries up to `count` in all (git keeps the header's count, in block order), then by offset, so
 * that blocks near each other are read once.
 */
function ieotBlocks(r: IndexBytes, hashLen: number, count: number, bad: (why: string) => Error): [number, number][] {
  // 32 bytes before the checksum in either format, its size 24 (read-cache.c EOIE_SIZE: a 20-byte hash
  // field even in sha256, whose hash runs on into the checksum): review g45, where latch looked at
  // `hashLen`'s own layout and never found git's in a sha256 repository.
  const eoie = r.size - hashLen - 32;
  if (eoie < 12) return [];
  const e = r.view(eoie, 12);
  if (e.length < 12 || e.toString("latin1", 0, 4) !== "EOIE" || e.readUInt32BE(4) !== 24) return [];
  const from = e.readUInt32BE(8);
  if (from < 12) return [];
  for (const { at, sig, size } of extensions(r, from, eoie, bad)) {
    if (sig !== "IEOT") continue;
    const stop = Math.min(at + 8 + size, eoie);
    if ((stop - at - 12) / 8 > MAX_BLOCKS) throw bad(`an IEOT extension of more than ${MAX_BLOCKS} blocks`);
    const blocks: [number, number][] = [];
    let left = count;
    for (let p = at + 12; p + 8 <= stop && left > 0; p += 8) {
      const pair = r.view(p, 8);
      const n = Math.min(pair.readUInt32BE(4), left);
      left -= n;
      if (n > 0) blocks.push([pair.readUInt32BE(0), n]);
    }
    return blocks.sort((a, b) => a[0] - b[0]);
  }
  return [];
}

/** The `link` extension's shared index name (hex), after the entries; undefined when the index is not split. */
function sharedIndex(r: IndexBytes, from: number, hashLen: number, bad: (why: string) => Error): string | undefined {
  for (const { at, sig } of extensions(r, from, r.size - hashLen, bad))
    if (sig === "link") return r.view(at + 8, hashLen).toString("hex", 0, hashLen);
  return undefined;
}
