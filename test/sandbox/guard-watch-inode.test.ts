// A watched folder removed and made again with the same inode number (review g15), apart from
// guard-watch.test.ts because it needs the freed number back: ext4 gives a new folder the lowest free
// inode of its group, and a test file beside it making folders took the number (a CI run, 2026-12-07:
// "the folder never got its inode number back"). scripts/test.mjs runs this file alone (SERIAL).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { watchFixture } from "./guard-watch-fixture.js";

const base = mkdtempSync(path.join(os.tmpdir(), "latch-guard-watch-inode-"));
after(() => rmSync(base, { recursive: true, force: true }));
const { rearmedIsSeen } = watchFixture(base);

test("a watched folder removed and made again with the same inode number is watched anew", () =>
  // Review g15: ext4 gives the lowest free inode, so `rm -rf sub/.git && mkdir sub/.git` often gets the
  // same number back; the kernel had ended the watch with the old folder, node said nothing, and by
  // `dev:ino` the new folder was the one watched: re-arming its config made no event.
  rearmedIsSeen("watch-same-inode", (root) => {
    const gitDir = path.join(root, "sub/.git");
    execFileSync("cp", ["-a", gitDir, path.join(root, "sub.git-copy")]);
    const ino = () => statSync(gitDir).ino;
    const was = ino();
    // ext4 gives a new folder the lowest free inode of its group: each one made that is not `was` is
    // kept (filling the lower free ones), until the next one made gets `was` back.
    const fillers = path.join(root, "fillers");
    mkdirSync(fillers); // before the removal, or it takes the number
    rmSync(gitDir, { recursive: true, force: true });
    let same = false;
    for (let i = 0; i < 20_000 && !same; i++) {
      mkdirSync(gitDir);
      same = ino() === was;
      if (!same) renameSync(gitDir, path.join(fillers, String(i)));
    }
    assert.ok(same, "the folder never got its inode number back: this test proves nothing here");
    execFileSync("sh", ["-c", "cp -a sub.git-copy/. sub/.git/"], { cwd: root });
  }));
