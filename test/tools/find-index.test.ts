// find_files' folder index (src/browse/find-index.ts): a folder's outcome is reused only while the
// folder, its .gitignore, the .gitignore files above it and the visibility rule are provably the same.
// Each test ages its tree past the steady margin once, warms the index, then tries a change an
// attacker (or a user) makes between two calls, and checks the next answer against the disk: no
// outside name, nothing hidden shown, every change seen, what was kept counted by the rule's calls.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  symlinkSync,
  writeSync,
  writeFileSync,
} from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { STEADY_FS, STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import { FolderIndex, walkIndexed } from "../../src/browse/find-index.js";
import { makeGlob } from "../../src/browse/glob.js";
import type { CallResult } from "../../src/host/types.js";
import { allDefinitions, parseEnvelopeDef, resolveEnvelope } from "../../src/policy/envelope-parse.js";
import { visibilityRule, type Visibility } from "../../src/policy/visibility.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { rgSpawnedDuring } from "./browse-fixture.js";

type Found = { matches: string[]; count: number; hidden?: number };
const ok = (r: CallResult): Found => {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return expectOk<Found>(r).result;
};

/** A tree with nested folders, leaves, a .gitignore at two levels, and what the rule hides. */
function build(fx: Fixture): void {
  fx.write({
    ".gitignore": "build/\n",
    "build/out.ts": "x\n",
    "keep.ts": "x\n",
    "a/b/c/deep.ts": "x\n",
    "a/b/c/deeper/leaf.ts": "x\n",
    "a/top.ts": "x\n",
    "pkg/.gitignore": "*.gen.ts\n",
    "pkg/skip.gen.ts": "x\n",
    "pkg/lib.ts": "x\n",
    "pkg/sub/inner.ts": "x\n",
    "x/y/z/many0.ts": "x\n",
    "x/y/z/many1.ts": "x\n",
    "a/.env.ts": "x\n", // the credential quarantine: hidden, counted
    "vault/v.ts": "x\n", // deny_paths below: a hidden folder, counted once
  });
  fx.write({ "../outside/deep/stolen.ts": "x\n" });
}

/** Waits until every fixture's tree has stood still for the steady margin. */
async function aged(): Promise<void> {
  await sleep(STEADY_MARGIN_MS + 100);
}

function rule(fx: Fixture, denyPaths: string[] = ["vault/**"], controlPlane: string[] = []): Visibility {
  return visibilityRule({
    root: fx.root,
    controlPlane,
    deniedSubstrings: [],
    envelope: resolveEnvelope(
      "t",
      allDefinitions({
        t: parseEnvelopeDef({ extends: "auto_edit", files: { read: { deny_paths: denyPaths } } }, ["envelopes", "t"]),
      }),
    ),
    tool: "find_files",
  });
}

interface WalkOpts {
  pattern?: string;
  start?: string;
  /** Called with each wanted file's path before it is taken (after its folder was listed). */
  onWanted?: (rel: string) => void;
  allowDir?: (rel: string) => Promise<boolean>;
  signal?: AbortSignal;
}

/** walkIndexed over `fx` with `index`, counting the rule's verdicts (each is a folder entry judged anew). */
async function walkCounted(fx: Fixture, index: FolderIndex, v: Visibility, o: WalkOpts = {}) {
  let judged = 0;
  const start = o.start ?? ".";
  const glob = makeGlob(o.pattern ?? "*.ts");
  const prefix = start === "." ? "" : start + "/";
  const r = await walkIndexed({
    root: fx.root,
    start: { abs: start === "." ? fx.root : path.join(fx.root, start), rel: start },
    visibility: { hides: (rel, isDir) => (judged++, v.hides(rel, isDir)), key: v.key },
    want: (rel) => (o.onWanted?.(rel), glob(rel.slice(prefix.length))),
    ...(o.allowDir ? { allowDir: o.allowDir } : {}),
    signal: o.signal ?? new AbortController().signal,
    index,
  });
  return { files: [...r.files].sort(), hidden: r.hidden, judged };
}

const SHOWN = [
  "a/b/c/deep.ts",
  "a/b/c/deeper/leaf.ts",
  "a/top.ts",
  "keep.ts",
  "pkg/lib.ts",
  "pkg/sub/inner.ts",
  "x/y/z/many0.ts",
  "x/y/z/many1.ts",
];

describe("find_files' folder index", () => {
  const fxs: Fixture[] = [];
  const fixture = () => {
    const fx = makeFixture();
    build(fx);
    fxs.push(fx);
    return fx;
  };
  let walks: Fixture, swap: Fixture, link: Fixture, ignores: Fixture, host: Fixture, rules: Fixture;
  let leafIgnore: Fixture, race: Fixture, times: Fixture, mapped: Fixture, chain: Fixture;
  let trusted = false;
  before(async () => {
    [walks, swap, link, ignores, host, rules] = [fixture(), fixture(), fixture(), fixture(), fixture(), fixture()];
    [leafIgnore, race, times, mapped, chain] = [fixture(), fixture(), fixture(), fixture(), fixture()];
    race.write({ "p/back\\slash/x.ts": "x\n", "p/f.ts": "x\n" }); // an escaped name: the resolver is asked
    times.write({ "t/leaf/a.ts": "x\n" });
    mapped.write({ "m/.gitignore": "b.ts\n", "m/a.ts": "x\n", "m/b.ts": "x\n" });
    let deep = "g";
    for (let i = 0; i < 100; i++) deep += "/g";
    mkdirSync(path.join(chain.root, deep), { recursive: true });
    for (let d = deep; d !== "."; d = path.dirname(d)) writeFileSync(path.join(chain.root, d, ".gitignore"), "*.log\n");
    writeFileSync(path.join(chain.root, deep, "end.ts"), "x\n");
    trusted = STEADY_FS.has(Number(statfsSync(walks.root).type));
    await aged();
  });
  after(() => {
    for (const fx of fxs) fx.cleanup();
  });

  test("an unchanged tree is answered from the index, a changed folder alone is listed again", async () => {
    const index = new FolderIndex();
    const v = rule(walks);
    const first = await walkCounted(walks, index, v);
    assert.deepEqual(first.files, SHOWN);
    assert.equal(first.hidden, 2); // a/.env.ts and vault
    assert.ok(first.judged > 10);
    const second = await walkCounted(walks, index, v);
    assert.deepEqual(second.files, SHOWN);
    assert.equal(second.hidden, 2);
    // On a filesystem that keeps ctimes as the index needs, nothing was judged again; elsewhere all was.
    assert.equal(second.judged, trusted ? 0 : first.judged);
    // A file made in a leaf (kept, judged by an lstat through its parent): that folder alone is listed.
    writeFileSync(path.join(walks.root, "x/y/z/many2.ts"), "x\n");
    const third = await walkCounted(walks, index, v);
    assert.deepEqual(third.files, [...SHOWN, "x/y/z/many2.ts"].sort());
    assert.equal(third.judged, trusted ? 3 : first.judged + 1); // many0, many1, many2
    // A subfolder start reuses what the whole walk kept (the .gitignore files above it unchanged).
    const sub = await walkCounted(walks, index, v, { start: "a/b" });
    assert.deepEqual(sub.files, ["a/b/c/deep.ts", "a/b/c/deeper/leaf.ts"]);
    if (trusted) assert.equal(sub.judged, 0);
  });

  test("a folder swapped for a link to outside between two calls: no outside name, its old files gone", async () => {
    const index = new FolderIndex();
    const v = rule(swap);
    assert.deepEqual((await walkCounted(swap, index, v)).files, SHOWN);
    await walkCounted(swap, index, v); // warm
    const c = path.join(swap.root, "a/b/c");
    renameSync(c, c + "-away");
    symlinkSync(path.join(swap.base, "outside/deep"), c);
    const during = await walkCounted(swap, index, v);
    assert.ok(!during.files.some((f) => f.includes("stolen")), during.files.join(" "));
    assert.ok(!during.files.some((f) => f.startsWith("a/b/c/")), "a link is no folder to list");
    // Swapped back: the folder's own ctime moved with the rename, so it is listed again, not taken as kept.
    rmSync(c);
    renameSync(c + "-away", c);
    assert.deepEqual((await walkCounted(swap, index, v)).files, SHOWN);
  });

  test("a file swapped for a link to an outside file in a kept folder is not listed", async () => {
    const index = new FolderIndex();
    const v = rule(link);
    await walkCounted(link, index, v);
    await walkCounted(link, index, v);
    const many0 = path.join(link.root, "x/y/z/many0.ts");
    rmSync(many0);
    symlinkSync(path.join(link.base, "outside/deep/stolen.ts"), many0);
    const after = await walkCounted(link, index, v);
    assert.deepEqual(
      after.files,
      SHOWN.filter((f) => f !== "x/y/z/many0.ts"),
    );
  });

  test("a .gitignore edited in place (its folder unchanged) is seen, below it too", async () => {
    const index = new FolderIndex();
    const v = rule(ignores);
    await walkCounted(ignores, index, v);
    await walkCounted(ignores, index, v);
    // Rewritten through the same inode: pkg's entries, and the root's, do not change.
    const edit = (rel: string, text: string) => {
      const fd = openSync(path.join(ignores.root, rel), "r+");
      try {
        writeSync(fd, text, 0);
      } finally {
        closeSync(fd);
      }
    };
    edit("pkg/.gitignore", "sub/\n#.ts\n");
    const pkg = await walkCounted(ignores, index, v);
    assert.deepEqual(pkg.files, [...SHOWN.filter((f) => f !== "pkg/sub/inner.ts"), "pkg/skip.gen.ts"].sort());
    // The root's .gitignore decides for every folder below: x/y/z's kept outcome must not stand.
    edit(".gitignore", "build/\nz/\n");
    const root = await walkCounted(ignores, index, v);
    assert.ok(!root.files.some((f) => f.startsWith("x/y/z/")), root.files.join(" "));
  });

  test("another rule is not answered from the index another rule filled", async () => {
    const index = new FolderIndex();
    await walkCounted(rules, index, rule(rules));
    await walkCounted(rules, index, rule(rules));
    const closed = await walkCounted(rules, index, rule(rules, ["vault/**", "pkg/**"]));
    assert.deepEqual(
      closed.files,
      SHOWN.filter((f) => !f.startsWith("pkg/")),
    );
    assert.equal(closed.hidden, 3);
  });

  test("a .gitignore above a kept leaf changed: the leaf is judged again, not taken by its stamp", async () => {
    const index = new FolderIndex();
    const v = rule(leafIgnore);
    await walkCounted(leafIgnore, index, v);
    await walkCounted(leafIgnore, index, v);
    const fd = openSync(path.join(leafIgnore.root, ".gitignore"), "r+");
    try {
      writeSync(fd, "many1.ts\n#", 0); // in place: no folder's entries change, x/y/z is a kept leaf
    } finally {
      closeSync(fd);
    }
    const after = await walkCounted(leafIgnore, index, v);
    assert.deepEqual(after.files, [...SHOWN.filter((f) => f !== "x/y/z/many1.ts"), "build/out.ts"].sort());
  });

  test("a file swapped for a link while its aged folder is listed: the listing is not kept, the name is looked up", async () => {
    const index = new FolderIndex();
    const f = path.join(race.root, "p/f.ts");
    let asked = 0;
    const r = await walkCounted(race, index, rule(race), {
      // The resolver is asked for the escaped name while p is listed: the swap lands between readdir and the end.
      allowDir: async (rel) => {
        if (rel === "p/back\\slash" && asked++ === 0) {
          rmSync(f);
          symlinkSync(path.join(race.base, "outside/deep/stolen.ts"), f);
        }
        return true;
      },
    });
    assert.equal(asked, 1);
    assert.ok(!r.files.includes("p/f.ts"), r.files.join(" "));
    assert.ok(r.files.includes("p/back\\slash/x.ts"));
  });

  test("a folder with an escaped name is entered only if the resolver allows it; plain names are not asked", async () => {
    const asked: string[] = [];
    const r = await walkCounted(race, new FolderIndex(), rule(race), {
      allowDir: async (rel) => (asked.push(rel), false),
    });
    assert.deepEqual(asked, ["p/back\\slash"]);
    assert.ok(!r.files.some((f) => f.startsWith("p/back")), r.files.join(" "));
  });

  test("entries changed in a kept leaf and its mtime set back: the ctime still moved, the change is seen", async () => {
    const index = new FolderIndex();
    const v = rule(times);
    const leaf = path.join(times.root, "t/leaf");
    await walkCounted(times, index, v);
    assert.ok((await walkCounted(times, index, v)).files.includes("t/leaf/a.ts"));
    const was = statSync(leaf, { bigint: true });
    renameSync(path.join(leaf, "a.ts"), path.join(leaf, "b.ts"));
    const ns = String(was.mtimeNs % 1_000_000_000n).padStart(9, "0");
    execFileSync("touch", ["-m", "-d", `@${was.mtimeNs / 1_000_000_000n}.${ns}`, leaf]);
    assert.equal(statSync(leaf, { bigint: true }).mtimeNs, was.mtimeNs);
    const files = (await walkCounted(times, index, v)).files;
    assert.ok(files.includes("t/leaf/b.ts") && !files.includes("t/leaf/a.ts"), files.join(" "));
  });

  test("a .gitignore changed through a shared mapping (its times unmoved) is read again at the next call", async () => {
    const tool = mapWriter(mapped.base);
    const file = path.join(mapped.root, "m/.gitignore");
    const writer = spawn(tool, [file], { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: writer.stdout })[Symbol.asyncIterator]();
    const write = async (text: string) => {
      writer.stdin.write(text.replace(/\n/g, "|") + "\n");
      assert.equal((await lines.next()).value, "ok");
    };
    try {
      await write("b.ts\n"); // the first write through the mapping moves the times; later ones do not
      const index = new FolderIndex();
      const v = rule(mapped);
      assert.deepEqual((await walkCounted(mapped, index, v, { start: "m" })).files, ["m/a.ts"]);
      assert.deepEqual((await walkCounted(mapped, index, v, { start: "m" })).files, ["m/a.ts"]);
      const stamp = lstatSync(file, { bigint: true });
      await write("a.ts\n");
      const now = lstatSync(file, { bigint: true });
      assert.equal(readFileSync(file, "utf8"), "a.ts\n");
      assert.deepEqual([now.ctimeNs, now.mtimeNs, now.size], [stamp.ctimeNs, stamp.mtimeNs, stamp.size]);
      assert.deepEqual((await walkCounted(mapped, index, v, { start: "m" })).files, ["m/b.ts"]);
      const all = (await walkCounted(mapped, index, v)).files;
      assert.deepEqual(
        all.filter((f) => f.startsWith("m/")),
        ["m/b.ts"],
      );
    } finally {
      writer.stdin.end();
      await once(writer, "exit");
    }
  });

  test("a deep chain of .gitignore files: the index stays within its bound, and answers stay right", async () => {
    const bound = 32 * 1024;
    // The aged chain keeps folders and chain ids; a fresh copy keeps no folder, only chain ids.
    const fresh = fixture();
    let deep = "g";
    for (let i = 0; i < 100; i++) deep += "/g";
    mkdirSync(path.join(fresh.root, deep), { recursive: true });
    for (let d = deep; d !== "."; d = path.dirname(d)) writeFileSync(path.join(fresh.root, d, ".gitignore"), "*.log\n");
    writeFileSync(path.join(fresh.root, deep, "end.ts"), "x\n");
    for (const fx of [chain, fresh]) {
      const index = new FolderIndex(bound);
      const v = rule(fx);
      for (let i = 0; i < 3; i++) {
        const r = (await walkCounted(fx, index, v)).files.filter((f) => f.startsWith("g/"));
        assert.equal(r.length, 1);
        assert.ok(r[0].endsWith("/g/end.ts"));
        assert.ok(index.bytes <= bound, `${index.bytes} bytes kept, bound ${bound}`);
        assert.ok(index.bytes > 0);
      }
    }
  });

  test("a control plane above the root changes the rule's key: its walk is not answered from another rule's", async () => {
    const index = new FolderIndex();
    await walkCounted(rules, index, rule(rules));
    const above = await walkCounted(rules, index, rule(rules, ["vault/**"], [rules.base]));
    assert.deepEqual(above.files, []);
  });

  test("past its bound the index starts again, and answers stay right", async () => {
    for (const bound of [4, 1000]) {
      const index = new FolderIndex(bound);
      const v = rule(walks);
      for (let i = 0; i < 3; i++) {
        const r = await walkCounted(walks, index, v);
        assert.deepEqual(r.files, [...SHOWN, "x/y/z/many2.ts"].sort());
        assert.equal(r.hidden, 2);
        assert.ok(index.bytes <= bound, `${index.bytes} bytes kept, bound ${bound}`);
        if (trusted && bound > 4) assert.ok(index.bytes > 0);
      }
    }
  });

  test("a fresh folder is never kept: a change within the margin is listed at every call", async () => {
    const fx = fixture(); // made now: younger than the margin
    const index = new FolderIndex();
    const v = rule(fx);
    const first = await walkCounted(fx, index, v);
    const second = await walkCounted(fx, index, v);
    assert.deepEqual(second.files, SHOWN);
    assert.equal(second.judged, first.judged);
  });

  test("a file swapped for a link while its fresh folder is walked is looked up again, not listed", async () => {
    const fx = fixture(); // younger than the margin: its listing is confirmed name by name
    const many0 = path.join(fx.root, "x/y/z/many0.ts");
    let swapped = false;
    const r = await walkCounted(fx, new FolderIndex(), rule(fx), {
      onWanted: (rel) => {
        if (rel !== "x/y/z/many0.ts" || swapped) return;
        swapped = true; // after the folder was read, before its names are taken
        rmSync(many0);
        symlinkSync(path.join(fx.base, "outside/deep/stolen.ts"), many0);
      },
    });
    assert.ok(swapped);
    assert.deepEqual(
      r.files,
      SHOWN.filter((f) => f !== "x/y/z/many0.ts"),
    );
  });

  test("a name the rule hides below the path does not empty the path's answer", async () => {
    const fx = fixture();
    fx.write({ "sub/y.ts": "x\n", "sub/x": "x\n" });
    const h = await fx.host({
      env: { PATH: process.env.PATH ?? "", HOME: fx.base },
      config: { toolsPolicies: { local_fs: { _denied_path_substrings: "x" } }, agents: {} },
    });
    const r = ok(await h.call("find_files", { pattern: "*", path: "sub" }));
    assert.deepEqual(r.matches, ["sub/y.ts"]);
    assert.equal(r.hidden, 1);
  });

  test("a chain of more nested .gitignore files than the walk once stopped at (64): walked to its end, starting no rg", async () => {
    const fx = fixture();
    let deep = "d";
    for (let i = 0; i < 64 + 5; i++) deep += "/d";
    mkdirSync(path.join(fx.root, deep), { recursive: true });
    for (let d = deep; d !== "."; d = path.dirname(d)) writeFileSync(path.join(fx.root, d, ".gitignore"), "*.log.ts\n");
    writeFileSync(path.join(fx.root, deep, "end.ts"), "x\n");
    writeFileSync(path.join(fx.root, deep, "skip.log.ts"), "x\n");
    const want = [...SHOWN, "vault/v.ts", `${deep}/end.ts`].sort();
    // Whatever LATCH_GREP_ENGINE says (it picks grep's engine): once rg took such a tree.
    for (const env of [{}, { LATCH_GREP_ENGINE: "rg" }, { LATCH_GREP_ENGINE: "js" }]) {
      const h = await fx.host({ env: { PATH: process.env.PATH ?? "", HOME: fx.base, ...env } });
      const { value: r, rg } = await rgSpawnedDuring(() => h.call("find_files", { pattern: "*.ts" }));
      assert.deepEqual(ok(r).matches.slice().sort(), want, JSON.stringify(env));
      assert.deepEqual(rg, [], `${JSON.stringify(env)}: rg started`);
    }
  });

  test("a folder one .gitignore ignores and a deeper one re-includes is walked, as git and rg do", async () => {
    const fx = fixture();
    fx.write({ ".gitignore": "build/\nout/\n", "p/.gitignore": "!out/\n", "p/out/b.ts": "x\n", "out/c.ts": "x\n" });
    const want = [...SHOWN, "vault/v.ts", "p/out/b.ts"].sort();
    for (const engine of ["rg", "js"]) {
      const h = await fx.host({ env: { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_GREP_ENGINE: engine } });
      const r = ok(await h.call("find_files", { pattern: "*.ts" }));
      assert.deepEqual(r.matches.slice().sort(), want, engine);
      assert.deepEqual(ok(await h.call("find_files", { pattern: "*.ts", path: "p/out" })).matches, ["p/out/b.ts"]);
    }
  });

  test("a path inside a gitignored folder shows nothing, whatever a .gitignore there re-includes", async () => {
    const fx = fixture();
    fx.write({
      "build/.gitignore": "!x.ts\n",
      "build/x.ts": "x\n",
      "build/sub/.gitignore": "!y.ts\n",
      "build/sub/y.ts": "x\n",
    });
    for (const engine of ["rg", "js"]) {
      const h = await fx.host({ env: { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_GREP_ENGINE: engine } });
      for (const where of ["build", "build/sub"])
        assert.deepEqual(
          ok(await h.call("find_files", { pattern: "*.ts", path: where })).matches,
          [],
          `${engine} ${where}`,
        );
    }
  });

  test("a call cancelled while a big folder is listed stops there, before any of its names is taken", async () => {
    const fx = fixture();
    const files: Record<string, string> = { "big/a\\dir/x.ts": "x\n" }; // sorts first: the resolver is asked for it
    for (let i = 0; i < 600; i++) files[`big/f${i}.ts`] = "";
    fx.write(files);
    const stop = new AbortController();
    const wanted: string[] = [];
    await assert.rejects(
      walkCounted(fx, new FolderIndex(), rule(fx), {
        start: "big",
        signal: stop.signal,
        allowDir: async () => (stop.abort(), true),
        onWanted: (rel) => wanted.push(rel),
      }),
      (err: Error & { code?: string }) => err.code === "ECANCELED",
    );
    assert.deepEqual(wanted, []);
  });

  test("through the host: later calls see a file made, removed and a folder renamed", async () => {
    const h = await host.host();
    const find = async () => ok(await h.call("find_files", { pattern: "*.ts" }));
    const all = [...SHOWN, "vault/v.ts"].sort(); // the default envelope denies no path; build/ is gitignored
    assert.deepEqual((await find()).matches, all);
    assert.deepEqual((await find()).matches, all);
    writeFileSync(path.join(host.root, "a/b/c/deeper/new.ts"), "x\n");
    rmSync(path.join(host.root, "pkg/lib.ts"));
    renameSync(path.join(host.root, "x/y"), path.join(host.root, "x/w"));
    const now = (await find()).matches;
    assert.deepEqual(
      now,
      [...all.filter((f) => f !== "pkg/lib.ts").map((f) => f.replace("x/y/", "x/w/")), "a/b/c/deeper/new.ts"].sort(
        (p, q) => (p < q ? -1 : 1),
      ),
    );
    const cancelled = new AbortController();
    cancelled.abort();
    const r = await h.call("find_files", { pattern: "*.ts" }, { signal: cancelled.signal });
    assert.equal(r.status, "error");
  });
});

/** A small C program that maps `FILE` shared and, per line on stdin, writes it there ("|" for a newline), then says ok. */
function mapWriter(dir: string): string {
  const src = path.join(dir, "mapwrite.c");
  const bin = path.join(dir, "mapwrite");
  writeFileSync(
    src,
    `#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
int main(int argc, char **argv) {
  int fd = open(argv[1], O_RDWR);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  char *p = mmap(0, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return 3;
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    size_t n = strcspn(line, "\\n");
    if (n > (size_t)st.st_size) n = st.st_size;
    for (size_t i = 0; i < n; i++) p[i] = line[i] == '|' ? '\\n' : line[i];
    printf("ok\\n");
    fflush(stdout);
  }
  return 0;
}
`,
  );
  try {
    execFileSync("cc", ["-O1", "-o", bin, src], { stdio: "pipe" });
  } catch (err) {
    throw new Error(
      `this test compiles a helper that writes through mmap: install a C compiler (cc): ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return bin;
}
