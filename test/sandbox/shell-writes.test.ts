// A contained run with a writable workspace changes files latch's undo cannot restore: its result says
// so and lists what it created, modified and deleted (from a stat of the tree before and after), in
// the real bubblewrap sandbox. A read-only run has no list.
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { makeSandboxFixture, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

type Out = { status: string; result?: Record<string, any> };

test("a contained workspace-write run's result lists the files it changed and says undo does not cover them", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-writes-");
  fixtures.push(fx);
  fx.write("keep.txt", "same\n");
  fx.write("edit.txt", "old\n");
  fx.write("gone.txt", "bye\n");
  fx.write("deep/x.txt", "x\n");
  // auto_edit runs `node` contained with a writable workspace and asks no one: a denying approver proves it.
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const js = [
    `const fs = require("fs");`,
    `fs.writeFileSync("edit.txt", "new\\n");`,
    `fs.unlinkSync("gone.txt");`,
    `fs.mkdirSync("made/sub", { recursive: true });`,
    `fs.writeFileSync("made/sub/n.txt", "n\\n");`,
    // Same size, same content, written again: the inode's ctime moves, so it counts as modified.
    `fs.writeFileSync("deep/x.txt", "x\\n");`,
  ].join("\n");
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  assert.equal(out.result!.mode, "workspace-write");
  const w = out.result!.workspace_writes;
  assert.deepEqual(w.changed, [
    { path: "deep/x.txt", change: "modified" },
    { path: "edit.txt", change: "modified" },
    { path: "gone.txt", change: "deleted" },
    { path: "made/", change: "created" },
    { path: "made/sub/", change: "created" },
    { path: "made/sub/n.txt", change: "created" },
  ]);
  assert.equal(w.count, 6);
  assert.match(w.note, /not covered by undo/);
  assert.equal(existsSync(path.join(fx.root, "gone.txt")), false);
});

test("a workspace-write run that changes nothing lists nothing; a read-only run has no list", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-writes-none-");
  fixtures.push(fx);
  writeFileSync(path.join(fx.root, "a.txt"), "a\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const out = (await host.call("local_shell", { command: "node", args: ["-e", "1"] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.mode, "workspace-write");
  assert.deepEqual(out.result!.workspace_writes.changed, []);
  // `ls` is a read-only command: it runs read-only, and nothing can change.
  const ls = (await host.call("local_shell", { command: "ls" })) as Out;
  assert.equal(ls.status, "ok", JSON.stringify(ls));
  assert.notEqual(ls.result!.mode, "workspace-write");
  assert.equal(ls.result!.workspace_writes, undefined);
});
