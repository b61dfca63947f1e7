// The index reader behind the guard's look at gitlinks (src/sandbox/gitlinks.ts), against indexes real
// git writes: versions 2, 3 (an intent-to-add entry's extended flags) and 4 (names prefix-compressed),
// a split index, and a sha256 repository. Each must give exactly the gitlinks `git ls-files -s` lists.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, test } from "node:test";
import { configIncludes, configUnderstood, configValue, configValues, namedByConfig } from "../../src/fs/git-config.js";
import { parseIndex, UnreadableIndex } from "../../src/sandbox/git-index.js";
import { beyondTheWalk } from "../../src/sandbox/gitlinks.js";
import { IndexBytes, IndexChanged } from "../../src/sandbox/index-bytes.js";

const base = mkdtempSync(path.join(os.tmpdir(), "latch-gitlinks-"));
after(() => rmSync(base, { recursive: true, force: true }));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base };

/** A repository with ordinary files and gitlinks at `links`, its index rewritten by `setup`. */
function repo(name: string, links: string[], setup: string[][] = [], format = "sha1"): string {
  const dir = path.join(base, name);
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, env, encoding: "utf8" }).trim();
  execFileSync("git", ["init", "-q", `--object-format=${format}`, dir], { env });
  for (let i = 0; i < 40; i++) writeFileSync(path.join(dir, `file-${i}-${"x".repeat(i)}.txt`), `${i}\n`);
  git("add", ".");
  const sha = git("hash-object", "-w", "--stdin");
  for (const l of links) git("update-index", "--add", "--cacheinfo", `160000,${sha},${l}`);
  for (const a of setup) git(...a);
  return dir;
}

/** The gitlinks git itself lists. */
function gitsOwn(dir: string): string[] {
  return execFileSync("git", ["ls-files", "-s"], { cwd: dir, env, encoding: "utf8", maxBuffer: 64 << 20 })
    .split("\n")
    .filter((l) => l.startsWith("160000 "))
    .map((l) => l.split("\t")[1])
    .sort();
}

const LINKS = ["node_modules/x", "node_modules/@scope/deep/er/y", "vendor/lib", "a-very-long-name-".repeat(12)];

for (const [what, setup, format] of [
  ["version 2", [["update-index", "--index-version", "2"]], "sha1"],
  ["version 3 (extended flags)", [], "sha1"],
  ["version 4 (names prefix-compressed)", [["update-index", "--index-version", "4"]], "sha1"],
  ["a split index", [["update-index", "--split-index"]], "sha1"],
  ["a sha256 repository", [], "sha256"],
] as const) {
  test(`${what}: the gitlinks are git's own`, () => {
    const name = what.replace(/\W+/g, "-");
    const dir = path.join(base, name);
    repo(
      name,
      LINKS,
      setup.map((s) => [...s]),
      format,
    );
    if (what.startsWith("version 3")) {
      // An intent-to-add entry carries extended flags, which only version 3 can hold.
      writeFileSync(path.join(dir, "later.txt"), "later\n");
      execFileSync("git", ["add", "-N", "later.txt"], { cwd: dir, env });
    }
    const own = gitsOwn(dir);
    assert.deepEqual(own, [...LINKS].sort(), "git lists the gitlinks made");
    const index = readFileSync(path.join(dir, ".git/index"));
    if (what.startsWith("version")) assert.equal(index.readUInt32BE(4), Number(what.split(" ")[1]));
    const parsed = parseIndex(index, format === "sha256" ? 32 : 20, "index");
    if (what === "a split index") {
      assert.equal(parsed.shared.length, 1, "the index names its shared index");
      assert.ok(readdirSync(path.join(dir, ".git")).includes(`sharedindex.${parsed.shared[0]}`));
    }
    // Through the guard's entry point, given no repository the walk found: every gitlinked `.git`.
    for (const l of LINKS) execFileSync("git", ["init", "-q", path.join(dir, l)], { env });
    const found = beyondTheWalk(dir, [], [], true);
    assert.deepEqual(found.dirs.sort(), LINKS.map((l) => path.join(dir, l, ".git")).sort());
    // And none the walk found already.
    const walked = LINKS.filter((l) => !l.startsWith("node_modules/")).map((l) => path.join(dir, l, ".git"));
    assert.deepEqual(
      beyondTheWalk(dir, walked, [], true).dirs.sort(),
      LINKS.filter((l) => l.startsWith("node_modules/"))
        .map((l) => path.join(dir, l, ".git"))
        .sort(),
    );
    if (what !== "a split index") assert.deepEqual(parsed.links.sort(), own);
  });
}

for (const version of ["2", "4"])
  test(`attack: a name with a NUL inside its length (index version ${version}): the gitlinks after it are git's (g43)`, () => {
    // A name's length is in its entry's flags; `a\0zzzzzz` with length 8 took latch to the first NUL,
    // 8 bytes short of git, and what it read after was not git's: the gitlink git enters went unseen.
    const dir = repo(`nul-name-v${version}`, ["node_modules/x"], [["update-index", "--index-version", version]]);
    writeFileSync(path.join(dir, "azzzzzzz"), "a\n");
    execFileSync("git", ["add", "azzzzzzz"], { cwd: dir, env });
    const file = path.join(dir, ".git/index");
    const index = readFileSync(file);
    const at = index.indexOf("azzzzzzz");
    index[at + 1] = 0;
    index.fill(0, index.length - 20); // a null checksum: git does not check one
    writeFileSync(file, index);
    assert.ok(gitsOwn(dir).includes("node_modules/x"), "git still reads the gitlink");
    assert.deepEqual(parseIndex(index, 20, "index").links, ["node_modules/x"]);
  });

for (const [format, h] of [
  ["sha1", 20],
  ["sha256", 32],
] as const)
  test(`attack: a gitlink git reaches through the index's IEOT offsets, hidden in another entry's name (${format}; g44, g45)`, () => {
    // With index.threads (by default on 3 cores or more, for a large index) and an EOIE extension, git
    // reads the entries block by block at the offsets IEOT gives. Entry `a`'s name holds a whole gitlink
    // entry; IEOT sends git there. Read one after another, the index holds no gitlink. Git looks for the
    // EOIE at 32 bytes before the checksum in either format (review g45: latch looked elsewhere in sha256).
    const fixed = 40 + h + 2;
    const entry = (mode: number, name: Buffer, flagsLen: number) => {
      const b = Buffer.alloc((fixed + name.length + 8) & ~7);
      b.writeUInt32BE(mode, 24);
      Buffer.alloc(h, mode === 0o160000 ? 0x22 : 0x11).copy(b, 40);
      b.writeUInt16BE(flagsLen, 40 + h);
      name.copy(b, fixed);
      return b;
    };
    const hidden = entry(0o160000, Buffer.from("node_modules/x"), 14);
    const name0 = Buffer.concat([Buffer.from("a\0", "latin1"), hidden]);
    const e0 = entry(0o100644, name0, name0.length);
    const header = Buffer.alloc(12);
    header.write("DIRC", 0, "latin1");
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(3, 8);
    const entries = Buffer.concat([
      header,
      e0,
      entry(0o100644, Buffer.from("z1"), 2),
      entry(0o100644, Buffer.from("z2"), 2),
    ]);
    const ieot = Buffer.alloc(28);
    ieot.write("IEOT", 0, "latin1");
    ieot.writeUInt32BE(20, 4);
    ieot.writeUInt32BE(1, 8);
    ieot.writeUInt32BE(12 + fixed + 2, 12); // the hidden entry, one
    ieot.writeUInt32BE(1, 16);
    ieot.writeUInt32BE(12 + e0.length, 20); // then z1 and z2
    ieot.writeUInt32BE(2, 24);
    // EOIE: a 20-byte hash field in either format; git's sha256 of it runs on into the checksum.
    const eoie = Buffer.alloc(32);
    eoie.write("EOIE", 0, "latin1");
    eoie.writeUInt32BE(24, 4);
    eoie.writeUInt32BE(entries.length, 8);
    const checksum = Buffer.alloc(h);
    const digest = createHash(format).update(ieot.subarray(0, 8)).digest();
    digest.copy(eoie, 12, 0, 20);
    digest.copy(checksum, 0, 20);
    const index = Buffer.concat([entries, ieot, eoie, checksum]);
    const dir = repo(`ieot-${format}`, [], [], format);
    writeFileSync(path.join(dir, ".git/index"), index);
    const ls = (threads: string) =>
      execFileSync("git", ["-c", `index.threads=${threads}`, "ls-files", "-s"], { cwd: dir, env, encoding: "utf8" });
    assert.match(ls("4"), /^160000 .*\tnode_modules\/x$/m, "git, reading by IEOT, sees the gitlink");
    assert.doesNotMatch(ls("1"), /node_modules/, "read one after another, there is none");
    assert.deepEqual(parseIndex(index, h, "index").links, ["node_modules/x"]);
    if (format === "sha256") return;
    // An IEOT block latch cannot read (one git would not use: EOIE's hash is not latch's to check) does
    // not hide the gitlinks read one after another.
    const plain = readFileSync(path.join(repo("ieot-bogus", ["node_modules/y"]), ".git/index"));
    const bogus = Buffer.from(ieot);
    bogus.writeUInt32BE(plain.length - 24, 12); // past the last entry
    bogus.writeUInt32BE(1000, 16);
    const tail = Buffer.from(eoie);
    tail.writeUInt32BE(plain.length - 20, 8); // where this IEOT starts
    const withBogus = Buffer.concat([plain.subarray(0, plain.length - 20), bogus, tail, Buffer.alloc(20)]);
    assert.deepEqual(parseIndex(withBogus, 20, "index").links, ["node_modules/y"]);
    // Blocks past the header's count of entries: git keeps that many, in block order, and so many are
    // read (an IEOT of thousands of blocks, each the whole index again, cost latch each time).
    const past = Buffer.from(ieot);
    past.writeUInt32BE(12, 12); // all three, one after another
    past.writeUInt32BE(3, 16);
    past.writeUInt32BE(12 + fixed + 2, 20); // then the hidden entry
    past.writeUInt32BE(1, 24);
    const pastDigest = createHash("sha1").update(past.subarray(0, 8)).digest();
    const pastTail = Buffer.from(eoie);
    pastDigest.copy(pastTail, 12);
    const overCount = Buffer.concat([entries, past, pastTail, checksum]);
    writeFileSync(path.join(dir, ".git/index"), overCount);
    assert.doesNotMatch(ls("4"), /node_modules/, "git keeps the header's count");
    assert.deepEqual(parseIndex(overCount, h, "index").links, []);
    // An IEOT behind an EOIE whose hash is not git's: git never reads it, and neither does latch (an IEOT
    // of 65,537 blocks once made latch refuse an index git read: review g51).
    const many = Buffer.alloc(12 + 8 * 65_537);
    many.write("IEOT", 0, "latin1");
    many.writeUInt32BE(many.length - 8, 4);
    many.writeUInt32BE(1, 8);
    for (let i = 0; i < 65_537; i++) many.writeUInt32BE(1, 12 + 8 * i + 4);
    const wrongTail = Buffer.from(tail);
    wrongTail.fill(0x5a, 12, 32); // not the hash of `many`'s header
    const untrusted = Buffer.concat([plain.subarray(0, plain.length - 20), many, wrongTail, Buffer.alloc(20)]);
    assert.deepEqual(parseIndex(untrusted, 20, "index").links, ["node_modules/y"]);
  });

test("attack: an index made 3.2 GB by extensions git skips gives git's gitlinks from under 1 MB read (g50)", () => {
  // Read whole, an index past 2 GiB (sparse: optional extensions of zeros, which git skips, and a null
  // checksum, which it does not check) was past what one read may hold, and the repository it
  // gitlinks went unjudged; one of 1.5 GB cost every later walk 16 s. The parse reads where git does.
  const dir = repo("huge-ext", ["node_modules/x"]);
  const file = path.join(dir, ".git/index");
  const plain = readFileSync(file).subarray(0, -20);
  const size = 1_600_000_000; // each extension's size is 32 bits: two of them
  const ext = Buffer.alloc(8);
  ext.write("ZZZZ", 0, "latin1");
  ext.writeUInt32BE(size, 4);
  const fd = openSync(file, "w");
  writeSync(fd, plain);
  writeSync(fd, ext, 0, 8, plain.length);
  writeSync(fd, ext, 0, 8, plain.length + 8 + size);
  ftruncateSync(fd, plain.length + 2 * (8 + size) + 20);
  closeSync(fd);
  const own = execFileSync("git", ["ls-files", "-s"], {
    cwd: dir,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  assert.match(own, /^160000 .*\tnode_modules\/x$/m, "git reads past them");
  // Read as the guard reads it: with sha1's length, and sha256's (a reading that must not hold together).
  // With sha256's, where the entries end is a run of zeros, which read as extensions of no payload, 8
  // bytes each: walked, that was 1.6 GB in 26 s. git dies at the first (its signature is not A-Z).
  const rd = openSync(file, "r");
  try {
    let read = 0;
    for (const h of [20, 32]) {
      const r = IndexBytes.ofFile(rd, fstatSync(rd).size);
      if (h === 20) assert.deepEqual(parseIndex(r, h, "index").links, ["node_modules/x"]);
      else assert.doesNotMatch(shown(attempt(() => parseIndex(r, h, "index"))), /node_modules/);
      read += r.reads.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
    }
    assert.ok(read < 1 << 20, `${read} bytes read`);
  } finally {
    closeSync(rd);
  }
  // As the guard's walk after a call meets it.
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  const found = beyondTheWalk(dir, [], [], false);
  assert.deepEqual(found.errors, []);
  assert.deepEqual(found.dirs, [path.join(dir, "node_modules/x/.git")]);
});

/** A version 2 or 4 index of `entries` ([mode, name, flags' length, v4's drop]) and `tail` (extensions), its checksum null. */
function handMade(version: 2 | 4, entries: [number, Buffer, number, number?][], tail = Buffer.alloc(0)): Buffer {
  const parts = entries.map(([mode, name, flagsLen, drop = 0]) => {
    const fixed = Buffer.alloc(62);
    fixed.writeUInt32BE(mode, 24);
    fixed.fill(mode === 0o160000 ? 0x22 : 0x11, 40, 60);
    fixed.writeUInt16BE(flagsLen, 60);
    if (version === 4) return Buffer.concat([fixed, Buffer.from([drop]), name, Buffer.alloc(1)]);
    const e = Buffer.alloc((62 + name.length + 8) & ~7);
    fixed.copy(e);
    name.copy(e, 62);
    return e;
  });
  const header = Buffer.alloc(12);
  header.write("DIRC", 0, "latin1");
  header.writeUInt32BE(version, 4);
  header.writeUInt32BE(entries.length, 8);
  return Buffer.concat([header, ...parts, tail, Buffer.alloc(20)]);
}

/** A result or an error, as text: an error's message and what it carries. */
function shown(x: unknown): string {
  return x instanceof Error ? `${x.message} ${JSON.stringify(x)}` : JSON.stringify(x);
}

/** What `f` returns or throws. */
function attempt<T>(f: () => T): T | Error {
  try {
    return f();
  } catch (err) {
    return err as Error;
  }
}

test("attack: what latch once would not follow, git does: the gitlink after each is found (g51)", () => {
  // Limits of latch's own made the reading git uses fail, and the other object format's reading, which
  // held, found nothing: the guard went on, silent, and the user's git status entered the repository.
  const dir = repo("limits", []);
  const link: [number, Buffer, number] = [0o160000, Buffer.from("node_modules/x"), 14];
  const zzzz = (n: number) => {
    const ext = Buffer.alloc(8 * n);
    for (let i = 0; i < n; i++) ext.write("ZZZZ", 8 * i, "latin1");
    return ext;
  };
  const cases: [string, Buffer][] = [
    // A name of 2 MiB (its flags say "longer", 0xFFF), then the gitlink.
    ["a 2 MiB name", handMade(2, [[0o100644, Buffer.alloc(2 << 20, "a"), 0x0fff], link])],
    // 1,001 optional extensions of no payload after the entries (latch stopped at 1,000).
    ["1,001 extensions", handMade(2, [link], zzzz(1001))],
    // Version 4, its first entry dropping 5 bytes of a name there is none of: git ignores it there.
    ["a first entry's drop", handMade(4, [[0o160000, Buffer.from("node_modules/x"), 14, 5]])],
  ];
  for (const [what, index] of cases) {
    writeFileSync(path.join(dir, ".git/index"), index);
    assert.deepEqual(gitsOwn(dir), ["node_modules/x"], `${what}: git reads the gitlink`);
    for (const h of [20, 32])
      assert.doesNotMatch(shown(attempt(() => parseIndex(index, h, "index"))), /more than|longer than/, what);
    assert.deepEqual(parseIndex(index, 20, "index").links, ["node_modules/x"], what);
  }
});

test("attack: a version 4 IEOT block whose first entry drops bytes: git with threads reads it afresh (g51, g53)", () => {
  // `bb`, then a gitlink written as "drop N, then node_modules/x". Read on, with N 1 it is
  // `bnode_modules/x`, and with N 5 (more than `bb` has) git dies: a read that latch took for the whole
  // index's (review g53). git with index.threads reads the second block afresh, ignores the drop, and
  // enters node_modules/x.
  for (const drop of [1, 5]) {
    const dir = repo(`v4-block-${drop}`, []);
    const e1 = handMade(4, [[0o100644, Buffer.from("bb"), 2]]).subarray(12, -20);
    const body = handMade(4, [
      [0o100644, Buffer.from("bb"), 2],
      [0o160000, Buffer.from("node_modules/x"), 0x0fff, drop],
    ]).subarray(0, -20);
    const ieot = Buffer.alloc(28);
    ieot.write("IEOT", 0, "latin1");
    ieot.writeUInt32BE(20, 4);
    ieot.writeUInt32BE(1, 8);
    ieot.writeUInt32BE(12, 12);
    ieot.writeUInt32BE(1, 16);
    ieot.writeUInt32BE(12 + e1.length, 20);
    ieot.writeUInt32BE(1, 24);
    const eoie = Buffer.alloc(32);
    eoie.write("EOIE", 0, "latin1");
    eoie.writeUInt32BE(24, 4);
    eoie.writeUInt32BE(body.length, 8);
    createHash("sha1").update(ieot.subarray(0, 8)).digest().copy(eoie, 12);
    const index = Buffer.concat([body, ieot, eoie, Buffer.alloc(20)]);
    writeFileSync(path.join(dir, ".git/index"), index);
    const ls = (threads: string) =>
      spawnSync("git", ["-c", `index.threads=${threads}`, "ls-files", "-s"], { cwd: dir, env, encoding: "utf8" });
    assert.match(ls("3").stdout, /^160000 .*\tnode_modules\/x$/m, "git with threads enters it");
    if (drop === 1) assert.match(ls("1").stdout, /\tbnode_modules\/x$/m, "read on, the name is another");
    else assert.match(ls("1").stderr, /malformed name field/, "read on, git dies");
    const links = parseIndex(index, 20, "index").links.sort();
    assert.deepEqual(links, drop === 1 ? ["bnode_modules/x", "node_modules/x"] : ["node_modules/x"]);
  }
});

test("attack: a split index's `link` that git reads, the last of two or one only EOIE's offset reaches (g51)", () => {
  for (const where of ["two links", "behind EOIE"]) {
    const dir = repo(`link-${where.replace(" ", "-")}`, ["node_modules/x"], [["update-index", "--split-index"]]);
    const file = path.join(dir, ".git/index");
    const b = readFileSync(file);
    const at = b.indexOf("link", 12, "latin1");
    const real = b.subarray(at, at + 8 + b.readUInt32BE(at + 4));
    const entries = b.subarray(0, at);
    let index: Buffer;
    if (where === "two links") {
      // First a link to a shared file that is not there: git takes each in turn, the last wins.
      const decoy = Buffer.from(real);
      decoy.fill(0xab, 8, 28);
      index = Buffer.concat([entries, decoy, real, Buffer.alloc(20)]);
    } else {
      // The real link inside an optional extension, which a read from the entries' end skips; EOIE's
      // offset points at it, where git with index.threads starts its read of the extensions.
      const zzzz = Buffer.alloc(8);
      zzzz.write("ZZZZ", 0, "latin1");
      zzzz.writeUInt32BE(real.length, 4);
      const eoie = Buffer.alloc(32);
      eoie.write("EOIE", 0, "latin1");
      eoie.writeUInt32BE(24, 4);
      eoie.writeUInt32BE(entries.length + 8, 8);
      createHash("sha1").update(real.subarray(0, 8)).digest().copy(eoie, 12);
      index = Buffer.concat([entries, zzzz, real, eoie, Buffer.alloc(20)]);
    }
    writeFileSync(file, index);
    const threads = where === "two links" ? "1" : "2";
    const own = execFileSync("git", ["-c", `index.threads=${threads}`, "ls-files", "-s"], {
      cwd: dir,
      env,
      encoding: "utf8",
    });
    assert.match(own, /^160000 .*\tnode_modules\/x$/m, `${where}: git reads the gitlink from the shared file`);
    execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
    assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/x/.git")], where);
  }
});

test("attack: a last entry that runs past the file's end is read from the zeros git reads there (g53)", () => {
  // git maps the index and reads on into the zeros that fill its last page; latch refused the index,
  // and a decoy made the other object format's reading hold with nothing: silent.
  for (const cut of ["its name", "its fixed part"]) {
    const dir = repo(`eof-${cut.length}`, ["node_modules/x"], [["update-index", "--index-version", "2"]]);
    const file = path.join(dir, ".git/index");
    const b = readFileSync(file);
    const count = b.readUInt32BE(8);
    let at = 12;
    for (let i = 0; i < count; i++) at += (62 + (b.readUInt16BE(at + 60) & 0xfff) + 8) & ~7;
    const last = handMade(2, [[0o100644, Buffer.from("zz"), 2]]).subarray(12, 12 + 64);
    const index = Buffer.concat([b.subarray(0, at), last.subarray(0, cut === "its name" ? 63 : 28)]);
    index.writeUInt32BE(count + 1, 8);
    writeFileSync(file, index);
    assert.deepEqual(gitsOwn(dir), ["node_modules/x"], `${cut}: git reads the gitlink before it`);
    assert.deepEqual(parseIndex(index, 20, "index").links, ["node_modules/x"], cut);
    execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
    const found = beyondTheWalk(dir, [], [], false);
    assert.deepEqual([found.dirs, found.errors], [[path.join(dir, "node_modules/x/.git")], []], cut);
  }
});

test("attack: a sparse directory whose tree holds a gitlink: the repositories in that folder are found (g53)", () => {
  // `node_modules/` as a sparse directory entry (mode 040000), its object a tree the call wrote that
  // holds gitlink `x`: no gitlink is in the index, git expands it from the tree, and with the user's
  // sparse checkout on it enters node_modules/x.
  const dir = repo("sparse-dir", [], [["update-index", "--index-version", "3"]]);
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, env, encoding: "utf8" }).trim();
  git("-c", "user.email=u@x", "-c", "user.name=u", "commit", "-q", "-m", "files");
  git("sparse-checkout", "init", "--cone");
  const tree = execFileSync("git", ["mktree", "--missing"], {
    cwd: dir,
    env,
    encoding: "utf8",
    input: `160000 commit ${"1".repeat(40)}\tx\n`,
  }).trim();
  const file = path.join(dir, ".git/index");
  const b = readFileSync(file);
  const count = b.readUInt32BE(8);
  const entries: Buffer[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    const flags = b.readUInt16BE(at + 60);
    const size = (62 + ((flags & 0x4000) !== 0 ? 2 : 0) + (flags & 0xfff) + 8) & ~7;
    entries.push(b.subarray(at, at + size));
    at += size;
  }
  const name = Buffer.from("node_modules/");
  const sparse = Buffer.alloc((64 + name.length + 8) & ~7);
  sparse.writeUInt32BE(0o040000, 24);
  Buffer.from(tree, "hex").copy(sparse, 40);
  sparse.writeUInt16BE(0x4000 | name.length, 60);
  sparse.writeUInt16BE(0x4000, 62); // skip-worktree
  name.copy(sparse, 64);
  const header = Buffer.from(b.subarray(0, 12));
  header.writeUInt32BE(3, 4);
  header.writeUInt32BE(count + 1, 8);
  const sdir = Buffer.from("sdir\0\0\0\0", "latin1");
  const index = Buffer.concat([header, ...entries, sparse, sdir, Buffer.alloc(20)]);
  writeFileSync(file, index);
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  assert.deepEqual(gitsOwn(dir), ["node_modules/x"], "git expands the sparse directory to the gitlink");
  assert.deepEqual(parseIndex(index, 20, "index").sparse, ["node_modules/"]);
  assert.deepEqual(beyondTheWalk(dir, [], [], false).dirs, [path.join(dir, "node_modules/x/.git")]);
});

/** A version 3 index of one sparse directory entry named `name` (mode 040000, skip-worktree) and `sdir`. */
function sparseOnly(name: string): Buffer {
  const entry = Buffer.alloc((64 + name.length + 8) & ~7);
  entry.writeUInt32BE(0o040000, 24);
  entry.writeUInt16BE(0x4000 | name.length, 60);
  entry.writeUInt16BE(0x4000, 62);
  entry.write(name, 64, "latin1");
  const header = Buffer.alloc(12);
  header.write("DIRC", 0, "latin1");
  header.writeUInt32BE(3, 4);
  header.writeUInt32BE(1, 8);
  return Buffer.concat([header, entry, Buffer.from("sdir\0\0\0\0", "latin1"), Buffer.alloc(20)]);
}

test("a sparse directory's folder reached through a link is not looked in: git enters no gitlink through one", () => {
  // Listed by name, `lnk -> ../outside` led latch out of the workspace to a repository there.
  const dir = repo("sparse-link", []);
  writeFileSync(path.join(dir, ".git/index"), sparseOnly("lnk/"));
  const outside = path.join(base, "sparse-link-outside");
  execFileSync("git", ["init", "-q", path.join(outside, "x")], { env });
  symlinkSync(outside, path.join(dir, "lnk"));
  const found = beyondTheWalk(dir, [], [], false);
  assert.deepEqual([found.dirs, found.errors], [[], []]);
});

test("attack: a gitlink reached through a link leads out of the workspace: not followed, as git does not", () => {
  // By name, `lnk -> ../outside` gave the guard `lnk/x/.git`, a repository outside the workspace, as
  // one git enters (and one to set aside when new). git's status does not enter it through the link.
  const dir = repo("gitlink-through-link", ["lnk/x"]);
  const outside = path.join(base, "gitlink-through-link-outside");
  execFileSync("git", ["init", "-q", path.join(outside, "x")], { env });
  symlinkSync(outside, path.join(dir, "lnk"));
  const found = beyondTheWalk(dir, [], [], false);
  assert.deepEqual([found.dirs, found.files, found.errors], [[], [], []]);
  // The same path with a real folder there is followed.
  rmSync(path.join(dir, "lnk"));
  execFileSync("git", ["init", "-q", path.join(dir, "lnk/x")], { env });
  assert.deepEqual(beyondTheWalk(dir, [], [], false).dirs, [path.join(dir, "lnk/x/.git")]);
});

test("attack: a sparse directory's name is a string git joins its tree's paths to, not a folder (g54)", () => {
  // git makes each expanded path as the entry's name and the tree's path joined (ensure_full_index):
  // `node_modules/a` and `b` give `node_modules/ab`, `` gives any path, `nod` and `e_modules/x` give
  // `node_modules/x`, `node_modules/..` and `x` give `node_modules/..x`. A repository on no such path
  // (`node_modules/zz` for two of them) is not looked into.
  for (const [name, repoAt] of [
    ["node_modules/a", "node_modules/ab"],
    ["", "node_modules/x"],
    ["nod", "node_modules/x"],
    ["node_modules/..", "node_modules/..x"],
  ]) {
    const dir = repo(`sparse-name-${name.length}-${repoAt.length}`, []);
    writeFileSync(path.join(dir, ".git/index"), sparseOnly(name));
    for (const at of [repoAt, "node_modules/zz"]) execFileSync("git", ["init", "-q", path.join(dir, at)], { env });
    const found = beyondTheWalk(dir, [], [], false);
    const expected = [repoAt, "node_modules/zz"]
      .filter((r) => r.startsWith(name))
      .map((r) => path.join(dir, r, ".git"));
    assert.deepEqual([found.dirs.sort(), found.errors], [expected.sort(), []], JSON.stringify(name));
  }
});

test("an IEOT of 200 blocks inside one 2 MiB name reads that name about once, not 200 times (g53)", () => {
  // Half the blocks start at the first entry, whose name runs 2 MiB to its NUL; half inside that name,
  // at bytes that read as an entry whose flags say "longer" (0xFFF), so its name runs to the same NUL.
  // Each looked through again, that was 200 × 2 MiB a parse and a check.
  const big = Buffer.alloc(2 << 20, "a");
  const inside = (i: number) => 8192 * (i + 1);
  for (let i = 0; i < 100; i++) big.writeUInt16BE(0x0fff, inside(i) + 60);
  // 200 entries, so that git keeps (and latch reads) all 200 blocks' entries.
  const small = Array.from({ length: 198 }, (_, i): [number, Buffer, number] => [0o100644, Buffer.from(`b${i}`), 0]);
  for (const e of small) e[2] = e[1].length;
  const body = handMade(2, [[0o100644, big, 0x0fff], ...small, [0o160000, Buffer.from("node_modules/x"), 14]]).subarray(
    0,
    -20,
  );
  const ieot = Buffer.alloc(12 + 8 * 200);
  ieot.write("IEOT", 0, "latin1");
  ieot.writeUInt32BE(ieot.length - 8, 4);
  ieot.writeUInt32BE(1, 8);
  for (let i = 0; i < 200; i++) {
    ieot.writeUInt32BE(i < 100 ? 12 : 12 + 62 + inside(i - 100), 12 + 8 * i);
    ieot.writeUInt32BE(1, 16 + 8 * i);
  }
  const eoie = Buffer.alloc(32);
  eoie.write("EOIE", 0, "latin1");
  eoie.writeUInt32BE(24, 4);
  eoie.writeUInt32BE(body.length, 8);
  createHash("sha1").update(ieot.subarray(0, 8)).digest().copy(eoie, 12);
  const dir = repo("ieot-long-name", []);
  const file = path.join(dir, ".git/index");
  writeFileSync(file, Buffer.concat([body, ieot, eoie, Buffer.alloc(20)]));
  const rd = openSync(file, "r");
  try {
    const r = IndexBytes.ofFile(rd, fstatSync(rd).size);
    assert.deepEqual(parseIndex(r, 20, "index").links, ["node_modules/x"]);
    const read = r.reads.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
    assert.ok(read < 3 * (2 << 20), `${read} bytes read`);
  } finally {
    closeSync(rd);
  }
});

test("an index that is shorter than its size when read is read again, not kept as read (g51)", () => {
  // Shrunk between the fstat and the reads, then grown back: a read that came up short, kept, would
  // compare nothing there at the next check and keep an answer that never saw the `link`.
  const dir = repo("shrunk", ["node_modules/x"]);
  const file = path.join(dir, ".git/index");
  const rd = openSync(file, "r");
  try {
    const r = IndexBytes.ofFile(rd, fstatSync(rd).size + 100);
    assert.throws(() => parseIndex(r, 20, "index"), IndexChanged);
  } finally {
    closeSync(rd);
  }
});

test("an index latch cannot read is an error that says so, not an index without gitlinks", () => {
  assert.throws(
    () => parseIndex(Buffer.from("NOPE0000000000000000"), 20, "x/index"),
    /cannot read the git index x\/index/,
  );
  // More entries than the file and its last page hold (git's read would fault past it): what was read
  // before is kept with the error, names to look at too.
  const dir = repo("cut", ["node_modules/z"]);
  const good = Buffer.from(readFileSync(path.join(dir, ".git/index")));
  good.writeUInt32BE(100_000, 8);
  const err = attempt(() => parseIndex(good, 20, "cut"));
  assert.ok(err instanceof UnreadableIndex, shown(err));
  assert.match(err.message, /cut short/);
  assert.deepEqual(err.partial.links, ["node_modules/z"]);
  // The guard's walk says so, and follows what was read all the same.
  writeFileSync(path.join(dir, ".git/index"), good);
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/z")], { env });
  for (let i = 0; i < 2; i++) {
    const found = beyondTheWalk(dir, [], [], false);
    assert.deepEqual(found.dirs, [path.join(dir, "node_modules/z/.git")], `check ${i + 1}`);
    assert.match(found.errors.join("\n"), /cannot read the git index .*cut short/, `check ${i + 1}`);
  }
  assert.throws(() => beyondTheWalk(dir, [], [], true), /cut short/, "a start is refused");
});

for (const under of ["node_modules", ".venv/lib/python3.12/site-packages"])
  test(`a split index whose shared file entry was replaced by a gitlink still gives that repository (${under})`, () => {
    // Review g2: the replacing entry has no name of its own (it takes the shared one's by position), so
    // every name below a folder the walks do not enter is taken (src/sandbox/not-walked.ts).
    const dir = repo(`split-replaced-${under.length}`, []);
    const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, env, encoding: "utf8" }).trim();
    mkdirSync(path.join(dir, under), { recursive: true });
    writeFileSync(path.join(dir, under, "x"), "x\n");
    git("add", "-f", `${under}/x`);
    git("update-index", "--split-index");
    rmSync(path.join(dir, under, "x"));
    execFileSync("git", ["init", "-q", path.join(dir, under, "x")], { env });
    const sha = git("hash-object", "-w", "--stdin");
    git("update-index", "--cacheinfo", `160000,${sha},${under}/x`);
    assert.deepEqual(gitsOwn(dir), [`${under}/x`], "git lists the gitlink");
    assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, under, "x/.git")]);
  });

test("an index that is a link is known by what it leads to: rewritten there, it is read again", () => {
  // Review g2: the kept answer was keyed by the link's own lstat, unchanged while its target was rewritten.
  const dir = repo("linked-index", []);
  const real = path.join(dir, ".git/idx2");
  renameSync(path.join(dir, ".git/index"), real);
  symlinkSync("idx2", path.join(dir, ".git/index"));
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, []);
  const other = repo("linked-index-other", ["node_modules/y"]);
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/y")], { env });
  writeFileSync(real, readFileSync(path.join(other, ".git/index"))); // in place: the link is unchanged
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/y/.git")]);
});

test("attack: an index rewritten through a shared mapping, its times unchanged, is read again (g49)", async () => {
  // Review g49: a background process kept `.git/index` mapped; its first write stamped the times, its
  // second (a gitlink added, the same size) stamped nothing, and every later check kept the first's
  // answer: the user's git status entered the armed repository. A real mapping, by python3's mmap.
  const dir = repo("mapped-index", []);
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, env, encoding: "utf8" }).trim();
  const blob = git("hash-object", "-w", "--stdin");
  git("update-index", "--add", "--cacheinfo", `100644,${blob},node_modules/x`);
  const plain = readFileSync(path.join(dir, ".git/index"));
  git("update-index", "--force-remove", "node_modules/x");
  git("update-index", "--add", "--cacheinfo", `160000,${blob},node_modules/x`);
  const armed = readFileSync(path.join(dir, ".git/index"));
  assert.equal(armed.length, plain.length, "the same size, so only the bytes tell them apart");
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  writeFileSync(path.join(dir, ".git/index"), plain);
  const writer = spawn(
    "python3",
    [
      "-c",
      [
        "import mmap, os, sys",
        "fd = os.open(sys.argv[1], os.O_RDWR)",
        "m = mmap.mmap(fd, 0)",
        "m[:] = open(sys.argv[2], 'rb').read()",
        "print('first', flush=True); sys.stdin.readline()",
        "m[:] = open(sys.argv[3], 'rb').read()",
        "print('second', flush=True); sys.stdin.readline()",
      ].join("\n"),
      path.join(dir, ".git/index"),
      ...writeBoth(plain, armed),
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: writer.stdout })[Symbol.asyncIterator]();
  try {
    assert.equal((await lines.next()).value, "first");
    await new Promise((r) => setTimeout(r, 2100)); // past every racy window: the answer is kept
    assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, []);
    const before = statSync(path.join(dir, ".git/index"));
    writer.stdin.write("\n");
    assert.equal((await lines.next()).value, "second");
    const now = statSync(path.join(dir, ".git/index"));
    assert.deepEqual([now.mtimeMs, now.ctimeMs, now.size], [before.mtimeMs, before.ctimeMs, before.size]);
    assert.deepEqual(gitsOwn(dir), ["node_modules/x"], "git reads the gitlink");
    assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/x/.git")]);
  } finally {
    writer.kill();
  }
});

test("attack: a split index's shared file changed in place under an unchanged index is read again (g50)", () => {
  // Review g50: the kept answer was keyed by the main index alone; git takes a shared file's trailer
  // for its name and never hashes it, so an entry's mode flipped to 160000 there, in place, made a
  // gitlink git enters that no check saw (the user's git status ran node_modules/x's core.fsmonitor).
  const dir = repo("split-flip", []);
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, env, encoding: "utf8" }).trim();
  const blob = git("hash-object", "-w", "--stdin");
  git("update-index", "--add", "--cacheinfo", `100644,${blob},node_modules/x`);
  git("update-index", "--split-index");
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, []);
  const shared = readdirSync(path.join(dir, ".git")).find((n) => n.startsWith("sharedindex."));
  assert.ok(shared, "git wrote a shared index");
  const file = path.join(dir, ".git", shared);
  const bytes = readFileSync(file);
  const name = bytes.indexOf("node_modules/x\0");
  assert.ok(name > 62, "the entry is in the shared file");
  bytes.writeUInt32BE(0o160000, name - 62 + 24); // its mode; the size and the trailer stay
  writeFileSync(file, bytes);
  assert.deepEqual(gitsOwn(dir), ["node_modules/x"], "git reads the gitlink");
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/x/.git")]);
});

/** The two versions as files for the writer to read. */
function writeBoth(a: Buffer, b: Buffer): [string, string] {
  const files: [string, string] = [path.join(base, "index-a"), path.join(base, "index-b")];
  writeFileSync(files[0], a);
  writeFileSync(files[1], b);
  return files;
}

test("the object format is git's: [extensions] alone, so a sha1 index is read as sha1 whatever [foo] says", () => {
  // Review g3: `objectformat = sha256` under any section made latch read a sha1 index with 32-byte ids;
  // each name lost 12 bytes, `node_modules/x` became `/x`, and that repository went unguarded.
  const dir = repo("format-decoy", ["node_modules/x"]);
  execFileSync("git", ["config", "foo.objectformat", "sha256"], { cwd: dir, env });
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/x/.git")]);
  assert.equal(configValue("[foo]\n\tobjectformat = sha256\n", "extensions", "objectformat"), undefined);
  assert.equal(configValue('[extensions] objectFormat = "sha256" # c\n', "extensions", "objectformat"), "sha256");
  assert.equal(configValue('[extensions "x"]\n\tobjectformat = sha256\n', "extensions", "objectformat"), undefined);
  assert.equal(configValue("[extensions]\n\tobjectformat = \\\n sha256\n", "extensions", "objectformat"), "sha256");
  assert.equal(configValue('[extensions]\n\tobjectformat = "sha256\n', "extensions", "objectformat"), null);
});

test("a gitlink named under .git (which the walk skips too) is found; one with `..` is left alone", () => {
  // Review g3: git refuses to add such a name, but an index patched byte for byte holds it, and git
  // status enters `.git/x` with its own config.
  const dir = repo("under-dotgit", ["Agit/x", "node_modules/xx/xx/outside"]);
  const index = path.join(dir, ".git/index");
  const patched = readFileSync(index)
    .toString("latin1")
    .replace("Agit/x", ".git/x")
    .replace("node_modules/xx/xx/outside", "node_modules/../../outside");
  writeFileSync(index, Buffer.from(patched, "latin1"));
  execFileSync("git", ["init", "-q", path.join(dir, ".git/x")], { env });
  mkdirSync(path.join(base, "outside/.git"), { recursive: true });
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, ".git/x/.git")]);
});

// Review g4, each tried for real on the fixes above.
test("a config with a continued line, or one latch cannot follow, still gives the index's gitlinks", () => {
  // A config latch could not follow was an error, so the index went unread; the guard then rewrote the
  // config, and the next call took the repository the gitlink led to for the user's.
  for (const [name, extra] of [
    ["continued", "[x]\n\ty = a\\\n b\n"],
    ["unfollowed", "[x]\n\t@ a line latch does not follow\n"],
  ]) {
    const dir = repo(`config-${name}`, ["node_modules/x"]);
    writeFileSync(path.join(dir, ".git/config"), readFileSync(path.join(dir, ".git/config"), "utf8") + extra);
    execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
    assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/x/.git")], name);
  }
});

test("a git folder a .git file names is read relative to that file's folder, whatever its config says", () => {
  // A moved submodule checkout x/sub names x/.git/modules/sub, made with no core.worktree: its index
  // was not read, and git entered the gitlink there.
  const dir = repo("named-gitdir", []);
  const gitDir = path.join(dir, "x/.git/modules/sub");
  execFileSync("git", ["init", "-q", "--bare", gitDir], { env });
  mkdirSync(path.join(dir, "x/sub"), { recursive: true });
  writeFileSync(path.join(dir, "x/sub/.git"), "gitdir: ../.git/modules/sub\n");
  execFileSync(
    "git",
    [
      "--git-dir",
      gitDir,
      "--work-tree",
      path.join(dir, "x/sub"),
      "update-index",
      "--add",
      "--cacheinfo",
      `160000,${"1".repeat(40)},node_modules/y`,
    ],
    { env },
  );
  execFileSync("git", ["init", "-q", path.join(dir, "x/sub/node_modules/y")], { env });
  const found = beyondTheWalk(dir, [path.join(dir, "x/.git")], [path.join(dir, "x/sub/.git")], true);
  assert.ok(found.dirs.includes(path.join(dir, "x/sub/node_modules/y/.git")), JSON.stringify(found));
});

test("a version 2 entry with extended flags is read as git reads it", () => {
  // The flag was read from version 3 on only: the name was taken from the flags' two bytes, "".
  const dir = repo("v2-extended", ["node_modules/x"], [["update-index", "--index-version", "2"]]);
  const index = path.join(dir, ".git/index");
  const b = readFileSync(index);
  const parts = [b.subarray(0, 12)];
  let at = 12;
  for (let i = 0; i < b.readUInt32BE(8); i++) {
    const flags = b.readUInt16BE(at + 60);
    const len = flags & 0xfff;
    const size = (62 + len + 8) & ~7;
    if (b.toString("latin1", at + 62, at + 62 + len) === "node_modules/x") {
      const e = Buffer.alloc((64 + len + 8) & ~7);
      b.copy(e, 0, at, at + 62);
      e.writeUInt16BE(flags | 0x4000, 60);
      b.copy(e, 64, at + 62, at + 62 + len);
      parts.push(e);
    } else parts.push(b.subarray(at, at + size));
    at += size;
  }
  parts.push(b.subarray(at));
  writeFileSync(index, Buffer.concat(parts));
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  assert.deepEqual(gitsOwn(dir), ["node_modules/x"], "git reads the entry");
  assert.deepEqual(beyondTheWalk(dir, [], [], true).dirs, [path.join(dir, "node_modules/x/.git")]);
});

test("a .git file past PATH_MAX throws out of neither a start nor the guard", () => {
  // Its open failed with ENAMETOOLONG, which threw out of the guard's check: every undo was off.
  const dir = repo("too-long", []);
  const segment = "d".repeat(200);
  execFileSync("bash", [
    "-c",
    `cd "$1" && for i in $(seq 22); do mkdir ${segment} && cd ${segment}; done && echo "gitdir: x" > .git`,
    "-",
    dir,
  ]);
  const file = path.join(dir, ...Array<string>(22).fill(segment), ".git");
  try {
    for (const strict of [true, false]) assert.deepEqual(beyondTheWalk(dir, [], [file], strict).errors, []);
  } finally {
    execFileSync("rm", ["-rf", path.join(dir, segment)]); // rm walks by descriptors; Node's rmSync cannot name it
  }
});

test("more gitlinks than latch follows in one walk stop a start with what to do, not minutes later", () => {
  // Review g5: thousands of repositories sharing one index of 20,000 gitlinks took every later call
  // 10–16 s (50 of them) or 33 s (150), and would have taken most of an hour.
  const dir = repo("many-links", []);
  const sha = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
  const lines = Array.from({ length: 50_001 }, (_, i) => `160000 ${sha} 0\tnode_modules/q${i}\n`).join("");
  execFileSync("git", ["update-index", "--index-info"], { cwd: dir, env, input: lines });
  assert.throws(() => beyondTheWalk(dir, [], [], true), /more than 50000 gitlinks/);
  // The guard's walk, after a call, follows them all (review g43: past the budget it read no more, and a
  // repository behind the last gitlink, armed by the call, stayed for the user's next git).
  mkdirSync(path.join(dir, "node_modules/q50000/.git"), { recursive: true });
  const lenient = beyondTheWalk(dir, [], [], false);
  assert.deepEqual(lenient.errors, []);
  assert.deepEqual(lenient.dirs, [path.join(dir, "node_modules/q50000/.git")]);
});

test("include paths and values are read as git reads them: comments, quotes and escapes", () => {
  // Review g7: `;c` with no space before it, `\\` escapes and a `#` inside quotes were read otherwise
  // than git reads them, and the file git included was left writable.
  const cfg = [
    "[include]",
    "\tpath = ../tools/gc;c",
    "\tpath = ../tools/g\\\\c",
    '\tpath = "../tools/a #b"',
    '[includeIf "gitdir:/x/"]',
    "\tpath = ../tools/if",
    "[core]",
    '\thooksPath = ".git hooks" ; comment',
  ].join("\n");
  assert.deepEqual(configIncludes(cfg), ["../tools/gc", "../tools/g\\c", "../tools/a #b", "../tools/if"]);
  assert.equal(configValue(cfg, "core", "hookspath"), ".git hooks");
  assert.equal(configValue('[core]\n\thooksPath = "unclosed\n', "core", "hookspath"), null);
  // A comment ends at its newline, backslash or not (joined, the next line's key was hidden from latch).
  assert.equal(configValue("[core]\n# a note \\\n\thooksPath = .githooks\n", "core", "hookspath"), ".githooks");
  assert.equal(configValue("[core]\n\thooksPath = a\\\nb\n", "core", "hookspath"), "ab");
  assert.equal(configValue("[core]\n\thooksPath = bad\\q\n", "core", "hookspath"), null);
});

test("what a config names that runs later: every hooksPath in any order, includes however spelled, never the root", () => {
  // Review g8: latch took the last hooksPath of its files read breadth first, git the last in include
  // order; a line holding U+2028 dropped the file's hooksPath; `%(x)` was skipped though git reads it
  // as a plain relative path; `include.path = ..` named the root itself.
  const root = mkdtempSync(path.join(base, "named-"));
  execFileSync("git", ["init", "-q", root], { env });
  const cfg = path.join(root, ".git/config");
  writeFileSync(
    cfg,
    readFileSync(cfg, "utf8") +
      "[include]\n\tpath = ../tools/a\n[core]\n\thooksPath = .githooks\n\tnote = a\u2028b\n" +
      "[include]\n\tpath = %(x)/y\n\tpath = ~/not-there.gitconfig\n",
  );
  mkdirSync(path.join(root, "tools"));
  writeFileSync(path.join(root, "tools/a"), "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = b\n");
  writeFileSync(path.join(root, "tools/b"), "[include]\n\tpath = c\n");
  const named = namedByConfig(path.join(root, ".git"), root, root, env).named.map((p) => path.relative(root, p));
  assert.deepEqual(named.sort(), [".git/%(x)/y", ".githooks", "tools/a", "tools/b", "tools/c", "tools/hooks"]);
  // git itself takes `.githooks` (the last in include order) and reads `tools/b`: both are named.
  const git = execFileSync("git", ["config", "--get", "core.hooksPath"], { cwd: root, env, encoding: "utf8" });
  assert.equal(git.trim(), ".githooks");
  // `..` (git refuses such a config: a folder) names nothing: not the root, where every write would ask.
  writeFileSync(cfg, readFileSync(cfg, "utf8") + "[include]\n\tpath = ..\n");
  assert.equal(namedByConfig(path.join(root, ".git"), root, root, env).named.length, 6);
});

test("a config that cannot be read hides nothing: not the gitlinks, not the rest; one that never ends is not read to its end", () => {
  // Review g9: `config.worktree` including `/proc/self/mem` (EIO) skipped the root's gitlinks, so a
  // repository under node_modules was adopted by the next call; one including `/proc/self/pagemap`
  // (size 0, endless) grew latch's buffer until the process aborted.
  for (const endless of ["/proc/self/mem", "/proc/self/pagemap"]) {
    const dir = repo(`unreadable-${path.basename(endless)}`, ["node_modules/x"]);
    execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
    writeFileSync(path.join(dir, ".git/config.worktree"), `[includeIf "gitdir:/nowhere/"]\n\tpath = ${endless}\n`);
    const more = readFileSync(path.join(dir, ".git/config"), "utf8") + "[core]\n\thooksPath = .githooks\n";
    writeFileSync(path.join(dir, ".git/config"), more);
    mkdirSync(path.join(dir, ".githooks"));
    const found = beyondTheWalk(dir, [], [], false);
    assert.deepEqual(found.dirs, [path.join(dir, "node_modules/x/.git")], endless);
    assert.deepEqual(
      found.named.map((n) => path.relative(dir, n.path)),
      [".githooks"],
      endless,
    );
  }
});

test("the system config is read unless GIT_CONFIG_NOSYSTEM is true as git reads a boolean", () => {
  // Review g9: `GIT_CONFIG_NOSYSTEM=0` is false to git, and latch skipped the system's hooksPath.
  const root = mkdtempSync(path.join(base, "nosystem-"));
  execFileSync("git", ["init", "-q", root], { env });
  const system = path.join(base, "system.gitconfig");
  writeFileSync(system, "[core]\n\thooksPath = .githooks\n");
  const named = (v: string | undefined) =>
    namedByConfig(path.join(root, ".git"), root, root, {
      HOME: base,
      GIT_CONFIG_SYSTEM: system,
      GIT_CONFIG_NOSYSTEM: v,
    }).named.map((p) => path.relative(root, p));
  for (const v of [undefined, "", "0", "false", "no", "off", "maybe"])
    assert.deepEqual(named(v), [".githooks"], String(v));
  for (const v of ["1", "true", "Yes", "on", "2"]) assert.deepEqual(named(v), [], v);
});

test("a header's quoted subsection holding `]` is read whole, as git reads it", () => {
  // Review g12: `[x "]"] # \` was cut at the first `]`; the rest read as an open quote ending in an
  // escape joined the next line, and `[options] strategy = a/b` below it was hidden from latch.
  const dir = mkdtempSync(path.join(base, "bracket-"));
  for (const sub of ['"]"', '"\\\\]"']) {
    const text = `[x ${sub}] # \\\n[options]\nstrategy = a/b\n`;
    const file = path.join(dir, "opts");
    writeFileSync(file, text);
    const git = execFileSync("git", ["config", "-f", file, "--get-all", "options.strategy"], { env, encoding: "utf8" });
    assert.equal(git.trim(), "a/b", "git reads it so");
    assert.deepEqual(configValues(text, "options", "strategy"), ["a/b"], sub);
  }
});

test("a NUL in a subsection cuts the key where git cuts it", () => {
  // Review g13: git hands on `section.sub.key` as a C string, so `[options "strategy\0"] k = a/b` is
  // `options.strategy` to its sequencer (and `[core "hookspath\0"]` a hooksPath), where latch read
  // another key and kept the file.
  const dir = mkdtempSync(path.join(base, "nul-"));
  const text = '[options "strategy\0"]\n\tk = a/b\n';
  const file = path.join(dir, "opts");
  writeFileSync(file, text);
  const git = execFileSync("git", ["config", "-f", file, "--list"], { env, encoding: "utf8" });
  assert.match(git, /^options\.strategy=a\/b$/m, "git reads it so");
  assert.deepEqual(configValues(text, "options", "strategy"), ["a/b"]);
  assert.equal(configUnderstood(text), false, "a NUL is never taken for understood");
  const root = mkdtempSync(path.join(base, "nul-root-"));
  execFileSync("git", ["init", "-q", root], { env });
  const cfg = path.join(root, ".git/config");
  writeFileSync(cfg, readFileSync(cfg, "utf8") + '[core "hookspath\0"]\n\tx = .evil\n');
  assert.deepEqual(
    namedByConfig(path.join(root, ".git"), root, root, env).named.map((p) => path.relative(root, p)),
    [".evil"],
  );
});
