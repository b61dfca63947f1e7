// The undo store's running totals (undo_roots, src/fs/preimages.ts): the bytes a root's blobs take and
// its calls, changed in each write's own transaction so that no write counts them again. The cap and
// the history limit are judged by these totals alone, so they must stay exact through deduplication,
// eviction, pruning and two processes writing one state database at once.
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { PreImages, type PreImage } from "../../src/fs/preimages.js";
import { sha256 } from "../../src/fs/text.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The root's totals as kept, and as counted from the rows. */
function totals(file: string, root: string) {
  const db = new Database(file, { readonly: true });
  try {
    const kept = db.prepare("SELECT bytes, calls FROM undo_roots WHERE root = ?").get(root) as
      { bytes: number; calls: number } | undefined;
    const bytes = (
      db.prepare("SELECT coalesce(sum(length(data)), 0) AS n FROM undo_blobs WHERE root = ?").get(root) as { n: number }
    ).n;
    const calls = (db.prepare("SELECT count(*) AS n FROM undo_calls WHERE root = ?").get(root) as { n: number }).n;
    return { kept, counted: { bytes, calls } };
  } finally {
    db.close();
  }
}

const replaced = (before: Buffer): PreImage => ({
  target: { rel: "f.txt" },
  before,
  afterSha: "after",
  beforeSha: sha256(before),
});

test("two processes writing one store at once: its totals equal a count of its rows, under the cap and the limit", async () => {
  const file = path.join(fx.base, "two.db");
  new PreImages(file).close(); // made and migrated before the two race
  // Each process keeps 300 calls' pre-images: half from a pool both share (deduplicated, or only
  // marked as used again), half its own; every blob ~600 bytes that do not deflate, against a cap of
  // 20,000 bytes and a limit of 40 calls, so both evict and prune many times over.
  const writer = `
    import { PreImages } from ${JSON.stringify(pathToFileURL(path.join(repo, "dist/fs/preimages.js")).href)};
    import { createHash, randomBytes } from "node:crypto";
    const store = new PreImages(process.argv[1], { maxCalls: 40 });
    const shared = Array.from({ length: 30 }, (_, i) => Buffer.alloc(600, i));
    for (let i = 0; i < 300; i++) {
      const before = i % 2 ? shared[(i * 7) % 30] : randomBytes(600);
      const beforeSha = createHash("sha256").update(before).digest("hex");
      const info = { callId: process.argv[2] + i, root: "/w", session: "s", tool: "write_file", cap: 20000 };
      await store.journal(info).keep([{ target: { rel: "f.txt" }, before, afterSha: "x", beforeSha }]);
    }
    store.close();`;
  const run = (tag: string) =>
    new Promise<number | null>((resolve, reject) => {
      const p = spawn(process.execPath, ["--input-type=module", "-e", writer, file, tag], { stdio: "inherit" });
      p.once("error", reject);
      p.once("exit", resolve);
    });
  assert.deepEqual(await Promise.all([run("a"), run("b")]), [0, 0]);
  const t = totals(file, "/w");
  assert.deepEqual(t.kept, t.counted);
  assert.ok(t.counted.bytes <= 20_000, `the cap holds: ${t.counted.bytes}`);
  assert.ok(t.counted.calls <= 40 + 64 && t.counted.calls >= 40, `the limit holds: ${t.counted.calls}`);
});

test("at the cap the least recently used go first, down to 7/8 of it, and never the pre-image of the call that stores", async () => {
  const file = path.join(fx.base, "cap.db");
  const store = new PreImages(file);
  const info = (id: string) => ({ callId: id, root: "/w", session: "s", tool: "write_file", cap: 10_000 });
  const [a, b, c, d] = [randomBytes(1_000), randomBytes(2_000), randomBytes(4_000), randomBytes(3_100)];
  await store.journal(info("c1")).keep([replaced(a)]);
  await store.journal(info("c2")).keep([replaced(b)]);
  await store.journal(info("c3")).keep([replaced(a)]); // a used again: b is now the oldest
  assert.deepEqual(totals(file, "/w").kept, { bytes: 3_000, calls: 3 });
  await store.journal(info("c4")).keep([replaced(c), replaced(d)]); // 10,100 > 10,000
  assert.equal(store.blob("/w", sha256(b)), undefined, "the least recently used went");
  for (const kept of [a, c, d]) assert.deepEqual(store.blob("/w", sha256(kept)), kept);
  assert.deepEqual(totals(file, "/w").kept, { bytes: 8_100, calls: 4 }, "down to 7/8 of the cap (8,750) or below");
  // One pre-image of 9,500 bytes: over 7/8 of the cap, all older ones go, and it stays.
  const big = randomBytes(9_500);
  await store.journal(info("c5")).keep([replaced(big)]);
  assert.deepEqual(store.blob("/w", sha256(big)), big);
  for (const gone of [a, c, d]) assert.equal(store.blob("/w", sha256(gone)), undefined);
  assert.deepEqual(totals(file, "/w"), { kept: { bytes: 9_500, calls: 5 }, counted: { bytes: 9_500, calls: 5 } });
  store.close();
});

test("past the history limit the oldest calls go with their files, 64 at a time; the newest stay whole", async () => {
  const file = path.join(fx.base, "prune.db");
  const store = new PreImages(file, { maxCalls: 10 });
  const info = (i: number) => ({ callId: `c${i}`, root: "/w", session: "s", tool: "edit_file", cap: 1 << 20 });
  for (let i = 1; i <= 74; i++) await store.journal(info(i)).keep([replaced(Buffer.from(`v${i}\n`))]);
  assert.equal(totals(file, "/w").counted.calls, 74, "up to 64 past the limit, nothing goes");
  await store.journal(info(75)).keep([replaced(Buffer.from("v75\n"))]);
  assert.deepEqual(totals(file, "/w").kept, { bytes: totals(file, "/w").counted.bytes, calls: 10 });
  assert.deepEqual(
    store.list("/w", "s", 100).map((c) => c.callId),
    Array.from({ length: 10 }, (_, i) => `c${75 - i}`),
  );
  assert.equal(store.call("/w", "c65"), undefined);
  assert.deepEqual(
    store.call("/w", "c66")?.files.map((f) => f.beforeSha),
    [sha256(Buffer.from("v66\n"))],
  );
  const db = new Database(file, { readonly: true });
  const orphans = db
    .prepare("SELECT count(*) AS n FROM undo_files WHERE seq NOT IN (SELECT seq FROM undo_calls)")
    .get();
  db.close();
  assert.deepEqual(orphans, { n: 0 }, "the pruned calls' files went with them");
  store.close();
});

test("a call that keeps twice is counted once, and a content kept again adds no bytes", async () => {
  const file = path.join(fx.base, "twice.db");
  const store = new PreImages(file);
  const info = { callId: "p1", root: "/w", session: "s", tool: "apply_patch", cap: 1 << 20 };
  const x = randomBytes(500);
  await store.journal(info).keep([replaced(x)]);
  await store.journal(info).keep([replaced(x), replaced(randomBytes(200))]);
  assert.deepEqual(totals(file, "/w"), { kept: { bytes: 700, calls: 1 }, counted: { bytes: 700, calls: 1 } });
  assert.equal(store.call("/w", "p1")?.files.length, 3);
  store.close();
});
