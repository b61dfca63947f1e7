// A file system that stamps whole seconds (ext2, ext3, ext4 made with 128-byte inodes; FAT two): a
// folder changed later in the second its ctime names keeps that ctime, and the walk kept its listing
// (review g48: `mkdir F && git init F/evil && git -C F/evil config core.fsmonitor …`, one call of
// three steps, a walk before and after each: none saw F/evil/.git, its config was not kept read-only
// nor neutralized, nothing was said, and the user's git status ran the payload, 3 tries in 3). Tried
// for real on such an ext4, made in a file and mounted here (as root, as CI runs).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import { createHost, type Host } from "../../src/host/create-host.js";
import { racy } from "../../src/fs/racy.js";
import { requireSandbox, SYSTEM_PATH } from "./sandbox-fixture.js";

let base: string;
let mnt: string;

before(() => {
  assert.equal(
    process.getuid?.(),
    0,
    "this test mounts a file system with whole-second times: run it as root (CI does)",
  );
  base = mkdtempSync("/var/tmp/latch-coarse-");
  mnt = path.join(base, "mnt");
  mkdirSync(mnt);
  const image = path.join(base, "fs.img");
  execFileSync("truncate", ["-s", "64M", image]);
  execFileSync("mkfs.ext4", ["-q", "-I", "128", image]);
  const mounted = spawnSync("mount", ["-o", "loop", image, mnt], { encoding: "utf8" });
  assert.equal(mounted.status, 0, `mount -o loop (needs root and a loop device): ${mounted.stderr}`);
});

after(() => {
  spawnSync("umount", [mnt]);
  rmSync(base, { recursive: true, force: true });
});

test("the file system here stamps whole seconds, which racy() takes for a coarse one", () => {
  const d = path.join(mnt, "probe");
  mkdirSync(d);
  const ctime = statSync(d).ctimeMs;
  assert.equal(ctime % 1000, 0, `ctime ${ctime}: not whole seconds`);
  assert.equal(racy(ctime + 1500, ctime), true, "read 1.5 s after a whole-second ctime");
  assert.equal(racy(ctime + 2000, ctime), false);
  assert.equal(racy(1_000_000_000_123.4 + 40, 1_000_000_000_123.4), true, "a fine ctime: 50 ms");
  assert.equal(racy(1_000_000_000_123.4 + 60, 1_000_000_000_123.4), false);
});

test("attack: a repository made in a new folder within the second its ctime names is neutralized (g48)", async () => {
  await requireSandbox();
  const root = path.join(mnt, "ws");
  const home = path.join(mnt, "home");
  mkdirSync(root);
  mkdirSync(home);
  const host: Host = await createHost({
    root,
    stateDir: path.join(base, "state"),
    config: { toolsPolicies: {}, agents: {} },
    env: { PATH: SYSTEM_PATH.join(":"), HOME: home },
    approver: yesApprover,
    envelope: "auto_edit",
  });
  try {
    for (const n of [1, 2, 3]) {
      const marker = path.join(base, `g48-ran-${n}`);
      const command = `mkdir F${n} && git init -q F${n}/evil && git -C F${n}/evil config core.fsmonitor "touch ${marker}; false" && echo ok`;
      const out = (await host.call("local_shell", { command })) as { status: string; result?: Record<string, any> };
      assert.equal(out.status, "ok", JSON.stringify(out));
      const config = readFileSync(path.join(root, `F${n}/evil/.git/config`), "utf8");
      // Kept read-only from its step's start (git config failed), or rewritten by the check after it.
      assert.doesNotMatch(config, /fsmonitor/, `try ${n}: ${JSON.stringify(out.result)}`);
      spawnSync("git", ["status", "--short"], {
        cwd: path.join(root, `F${n}/evil`),
        env: { PATH: SYSTEM_PATH.join(":"), HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
      });
      assert.equal(existsSync(marker), false, `try ${n}: the model's core.fsmonitor ran at the user's git status`);
    }
  } finally {
    host.close();
  }
});
