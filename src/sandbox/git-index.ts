// Reading what git reads, as git reads it, for gitlinks.ts: an index file's gitlinks (versions 2 to
// 4, split indexes, sha1 and sha256), and the two config values that decide how (the object format)
// and where (a submodule's worktree). Where latch read differently from git (an object format taken
// from any section), the model chose what latch saw (review g3: a sha1 index read as sha256 lost 12
// bytes of each name, `node_modules/x` became `/x`, and the repository there went unguarded).
import { createHash } from "node:crypto";
import { bytesToInternal, showName } from "../fs/names.js";
import { IndexBytes, IndexChanged } from "./index-bytes.js";
import { mayBeNotWalked } from "./not-walked.js";

const GITLINK = 0o160000;
const SPARSE_DIR = 0o040000;

/** What an index holds for gitlinks.ts. */
export interface IndexGitlinks {
  /** The gitlinks' paths ("" for an entry of a split index that takes its name from the shared one). */
  links: string[];
  /** Every path that may be below a folder the walks do not enter (not-walked.ts), when asked for (a split index's shared file). */
  skipped: string[];
  /** The shared indexes' names (hex) a `link` extension gives, as git may read it (`git update-index --split-index`). */
  shared: string[];
  /**
   * Its sparse directories' paths (mode 040000, `folder/`): git expands each from its tree object, whose
   * gitlinks it enters where the folder is there (review g53: a tree the call wrote, with the user's
   * sparse checkout on). The index does not hold them: gitlinks.ts looks in the folder.
   */
  sparse: string[];
}

/** An index read as far as latch could, the way it cannot read it said; `partial`: what it read before that. */
export class UnreadableIndex extends Error {
  constructor(
    message: string,
    readonly partial: IndexGitlinks,
  ) {
    super(message);
  }
}

/**
 * The most of a name latch keeps: a longer one is followed, not kept (git enters no path past PATH_MAX,
 * 4,096 bytes). A version 4 name is built from the last one's start: its first bytes are all it needs.
 */
const MAX_KEPT = 64 * 1024;

/** The extensions git knows whose signature does not start A-Z: at any other, git dies (read-cache.c read_index_extension). */
const REQUIRED_KNOWN = new Set(["link", "sdir"]);

/**
 * The gitlinks of an index file (git's Documentation/gitformat-index.txt), read where git reads: the
 * header, the entries one after another, the extensions' headers from where they end, and the payloads
 * of the two it needs (link; IEOT, with EOIE). An index latch cannot read is an error that names it:
 * taken for one with no gitlinks, it would leave one unguarded. Where git's own read goes on, so does
 * latch's, at a cost that grows with the bytes (review g51: limits of latch's own, 1,000 extensions or a
 * 1 MiB name, made the reading git uses fail, and the other object format's reading, which held, found
 * nothing).
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
  const out: IndexGitlinks = { links: [], skipped: [], shared: [], sparse: [] };
  const kept = version === 4 ? Buffer.alloc(MAX_KEPT) : undefined;
  const nul = { from: -1, at: -1 };
  const read = (at: number, n: number) => readEntries(r, at, n, hashLen, kept, nul, wantSkipped, out, bad);
  // Read on from the header, as git without threads does; one it cannot read, git cannot either, and
  // with threads git reads no further than the blocks below.
  let failed: unknown;
  try {
    const sequential = extensionsUsed(r, read(12, count), hashLen);
    if (sequential.link !== undefined) out.shared.push(sequential.link);
  } catch (err) {
    if (err instanceof IndexChanged) throw err;
    failed = err;
  }
  // With index.threads (by default, on 3 cores or more, for a large index) and an EOIE extension git
  // trusts, git reads otherwise (read-cache.c do_read_index): the entries block by block at the offsets
  // an IEOT extension gives, a version 4 name starting afresh at each (review g44: a gitlink inside entry
  // `a`'s name bytes, reached through IEOT), and the extensions from EOIE's offset (review g51: a `link`
  // hidden inside an optional extension, first from there). Both readings are git's: each is read.
  const offset = trustedEoie(r, hashLen);
  if (offset !== undefined) {
    const threaded = extensionsUsed(r, offset, hashLen);
    if (threaded.link !== undefined) out.shared.push(threaded.link);
    // A block latch cannot read is skipped: git, which cannot either, refuses the index. What a block gave
    // before it failed is kept.
    for (const [at, n] of ieotBlocks(r, threaded.ieot, count)) {
      try {
        read(at, n);
      } catch {
        continue;
      }
    }
  }
  if (out.links.length > 1) out.links = [...new Set(out.links)];
  if (out.shared.length > 1) out.shared = [...new Set(out.shared)];
  if (failed !== undefined && offset === undefined) throw new UnreadableIndex((failed as Error).message, out);
  return out;
}

/**
 * `count` entries from `at` into `out`, a block's start (no name before the first); where they end.
 * `kept`: version 4's names' first bytes (MAX_KEPT), each the previous one's start and a suffix. `nul`:
 * the last NUL looked for (nulAt).
 */
function readEntries(
  r: IndexBytes,
  at: number,
  count: number,
  hashLen: number,
  kept: Buffer | undefined,
  nul: { from: number; at: number },
  wantSkipped: boolean,
  out: IndexGitlinks,
  bad: (why: string) => Error,
): number {
  const fixed = 40 + hashLen + 2; // times, ids and mode, the object id, the flags
  // The previous name's length (version 4): -1 before the block's first entry, whose drop git ignores
  // (create_from_disk: review g51, a first entry that dropped 5 bytes made latch refuse what git read).
  let length = -1;
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
    let nameBytes: Buffer | undefined;
    if (kept !== undefined) {
      // How many bytes of the previous name to drop (git's varint), then the rest, NUL-ended.
      const [drop, from] = decodeVarint(r, start);
      let keep = 0;
      if (length >= 0) {
        if (drop > length) throw bad("a name cut short"); // git dies: "malformed name field"
        keep = length - drop;
      }
      const suffix = named === 0x0fff ? nulAt(r, from, nul) - from : named - keep;
      if (suffix < 0 || from + suffix >= r.readable) throw bad("a name cut short");
      if (keep < MAX_KEPT) {
        const n = Math.min(suffix, MAX_KEPT - keep);
        r.view(from, n).copy(kept, keep, 0, n);
      }
      length = keep + suffix;
      nameBytes = length <= MAX_KEPT ? kept.subarray(0, length) : undefined;
      at = from + suffix + 1;
    } else {
      const len = named === 0x0fff ? nulAt(r, start, nul) - start : named;
      if (len < 0 || start + len > r.readable) throw bad("a name cut short");
      nameBytes = len <= MAX_KEPT ? r.view(start, len).subarray(0, len) : undefined;
      at += (fixed + (extended ? 2 : 0) + len + 8) & ~7;
    }
    if (nameBytes === undefined) continue; // past PATH_MAX: no path git enters
    const cut = nameBytes.indexOf(0);
    if (cut >= 0) nameBytes = nameBytes.subarray(0, cut);
    if ((mode & 0o170000) === GITLINK) out.links.push(bytesToInternal(nameBytes));
    if ((mode & 0o170000) === SPARSE_DIR) out.sparse.push(bytesToInternal(nameBytes));
    if (wantSkipped && mayBeNotWalked(nameBytes)) out.skipped.push(bytesToInternal(nameBytes));
  }
  return at;
}

/**
 * git's decode_varint (varint.c) at `at`: the value and where the name starts. On overflow git takes 0
 * and reads the name from the varint's own first byte.
 */
function decodeVarint(r: IndexBytes, at: number): [number, number] {
  const v = r.view(at, 16);
  if (v.length === 0) return [Number.MAX_SAFE_INTEGER, at];
  let p = 0;
  let c = v[p++];
  if (c < 128) return [c, at + 1];
  let val = BigInt(c & 127);
  while (c & 128) {
    val += 1n;
    if (val >> 57n !== 0n) return [0, at]; // MSB(val, 7): the top 7 of 64 bits
    if (p >= v.length) return [Number.MAX_SAFE_INTEGER, at + p]; // past the file's end: no name git reads
    c = v[p++];
    val = (val << 7n) + BigInt(c & 127);
  }
  return [val > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(val), at + p];
}

/**
 * Where the first NUL from `from` is; -1 when the mapping ends first. `last`: the last one found, and
 * where from: IEOT blocks that start inside one long name do not each look through it again (review
 * g53: 1,000 blocks inside a 20 MiB name cost every later call 31 s).
 */
function nulAt(r: IndexBytes, from: number, last: { from: number; at: number }): number {
  if (last.from >= 0 && from >= last.from && (last.at < 0 || from <= last.at)) return last.at;
  let found = -1;
  for (let p = from; ;) {
    const w = r.view(p, 1);
    if (w.length === 0) break;
    const i = w.indexOf(0);
    if (i >= 0) {
      found = p + i;
      break;
    }
    p += w.length;
  }
  last.from = from;
  last.at = found;
  return found;
}

/**
 * The extensions git reads from `at` (read-cache.c load_index_extensions), each's header alone: the
 * last `link`'s shared index (git's read_link_extension takes each in turn) and the first IEOT's
 * offset. They end where git's read dies: a signature not A-Z that git does not know (a run of zeros
 * reads as extensions of no payload, 8 bytes each: walked, 1.6 GB took 26 s).
 */
function extensionsUsed(r: IndexBytes, at: number, hashLen: number): { link?: string; ieot?: number } {
  const found: { link?: string; ieot?: number } = {};
  for (; at + 8 <= r.size - hashLen;) {
    const h = r.view(at, 8);
    if (h.length < 8) break;
    const sig = h.toString("latin1", 0, 4);
    const size = h.readUInt32BE(4);
    if ((h[0] < 0x41 || h[0] > 0x5a) && !REQUIRED_KNOWN.has(sig)) break;
    if (sig === "link") found.link = r.view(at + 8, hashLen).toString("hex", 0, hashLen);
    if (sig === "IEOT" && found.ieot === undefined) found.ieot = at;
    at += 8 + size;
  }
  return found;
}

/**
 * Where the extensions start, by the EOIE extension, when git trusts it (read-cache.c
 * read_eoie_extension): 32 bytes before the checksum in either format, its size 24 (a 20-byte hash
 * field even in sha256, whose hash runs on into the checksum: review g45), the hash of every
 * extension's header from its offset on, landing on it. Untrusted, git reads one after another.
 */
function trustedEoie(r: IndexBytes, hashLen: number): number | undefined {
  const eoie = r.size - hashLen - 32;
  if (eoie < 12) return undefined;
  const e = r.view(eoie, 12 + hashLen);
  if (e.length < 12 + hashLen || e.toString("latin1", 0, 4) !== "EOIE" || e.readUInt32BE(4) !== 24) return undefined;
  const field = Buffer.from(e.subarray(12, 12 + hashLen));
  const offset = e.readUInt32BE(8);
  if (offset < 12 || offset >= eoie) return undefined;
  const hash = createHash(hashLen === 32 ? "sha256" : "sha1");
  let at = offset;
  for (; at < eoie;) {
    const h = r.view(at, 8);
    if (h.length < 8) return undefined;
    // Where git's extension read would die, its threaded read dies too: no need to go on.
    if ((h[0] < 0x41 || h[0] > 0x5a) && !REQUIRED_KNOWN.has(h.toString("latin1", 0, 4))) return undefined;
    hash.update(h.subarray(0, 8));
    at += 8 + h.readUInt32BE(4);
  }
  return at === eoie && hash.digest().equals(field) ? offset : undefined;
}

/**
 * The IEOT extension at `at`'s blocks (offset, entries), as git uses them: its version 1, entries up to
 * `count` in all (git keeps the header's count, in block order), then by offset, so that blocks near
 * each other are read once.
 */
function ieotBlocks(r: IndexBytes, at: number | undefined, count: number): [number, number][] {
  if (at === undefined) return [];
  const h = r.view(at, 12);
  if (h.length < 12 || h.readUInt32BE(8) !== 1) return [];
  const stop = Math.min(at + 8 + h.readUInt32BE(4), r.readable);
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
