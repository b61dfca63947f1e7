// A write holds the file it replaces open across its rename (its read's pin, src/fs/current.ts, and
// the rename's own hold, src/fs/atomic-write.ts): no other file can be given that inode number
// meanwhile. The last of those closes goes to the thread pool (it frees the file's blocks), so it
// ends a moment after the call: each must still end, or a long-lived server would keep every file it
// ever replaced, blocks and all, until it runs out of descriptors or disk.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-replaced-fds-");
after(() => fx.cleanup());

/** This process's descriptors of files under `root` that no longer have a name (replaced or removed). */
function heldReplaced(root: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the readdir's own descriptor, or a close on the pool)
    }
    if (target.startsWith(root + path.sep) && target.endsWith(" (deleted)")) out.push(target);
  }
  return out;
}

/** What `held` finds once the thread pool's closes have had their turn (up to ~5 s). */
async function settled(held: () => string[]): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    if (held().length === 0) return [];
    await sleep(50);
  }
  return held();
}

test("after edits, writes, a patch and a delete, the server holds none of the files they replaced", async () => {
  fx.write({ "a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n" });
  const host = await fx.host();
  after(() => host.close());
  const call = async (tool: string, args: Record<string, unknown>) => {
    const r = await host.call(tool, args, { session: "s" });
    assert.equal(r.status, "ok", JSON.stringify(r));
  };
  for (const f of ["a.txt", "b.txt", "c.txt"]) await call("read_file", { path: f });
  for (let i = 1; i <= 20; i++) {
    await call("edit_file", { path: "a.txt", old_string: `a${i - 1}\n`, new_string: `a${i}\n` });
    await call("write_file", { path: "b.txt", content: `b${i}\n` });
  }
  await call("apply_patch", {
    patch: "*** Begin Patch\n*** Update File: c.txt\n@@\n-c0\n+c1\n*** End Patch\n",
  });
  await call("delete_file", { path: "b.txt" });
  assert.equal(readFileSync(path.join(host.root, "a.txt"), "utf8"), "a20\n");
  assert.equal(readFileSync(path.join(host.root, "c.txt"), "utf8"), "c1\n");
  assert.deepEqual(await settled(() => heldReplaced(host.root)), [], "every replaced file let go");
});

test("a move over a file not read is refused, and lets go of the file it looked at", async () => {
  fx.write({ "m/a.txt": "a\n", "m/b.txt": "b\n" });
  const host = await fx.host();
  after(() => host.close());
  const b = path.join(host.root, "m", "b.txt");
  const heldB = () =>
    readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === b;
      } catch {
        return false;
      }
    });
  for (let i = 0; i < 5; i++) {
    const r = await host.call("move_file", { from: "m/a.txt", to: "m/b.txt", overwrite: true }, { session: "s" });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.match(JSON.stringify(r), /you have not read it in this session/, JSON.stringify(r));
  }
  assert.deepEqual(await settled(heldB), [], "no descriptor of m/b.txt left open by the refused moves");
  assert.equal(readFileSync(b, "utf8"), "b\n");
});
