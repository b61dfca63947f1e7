// Attack (review g67): a removal renamed the name aside to a temp name in the same folder, judged
// the file there by device and inode, then unlinked the temp name by name. A process watching the
// folder (inotify) exchanged that temp name with another file of the folder in between, and the
// other file was removed (move_file 205 of 300, delete_file 76 of 300), the reply saying all was well.
// The name now goes to a folder of latch's state (outside the workspace, hidden from every sandbox),
// is judged there and unlinked there (removeIfStill in src/fs/same-file.ts).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { TAG } from "../../src/fs/temp-names.js";
import { makeFixture } from "../helpers/fixture.js";
import { compileRacer, startRacer } from "../helpers/racer.js";
import { stressCount } from "../helpers/stress.js";

const ROUNDS = stressCount(40, 400, "LATCH_REMOVAL_TRASH_ROUNDS");

/** On each name made in DIR that starts with PREFIX, exchanges it (once) with VICTIM; "swaps N" at SIGTERM. */
const RACER = String.raw`
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
static volatile long swaps = 0;
static void stop(int s) { (void)s; char b[64]; int n = snprintf(b, sizeof b, "swaps %ld\n", swaps); write(1, b, n); _exit(0); }
int main(int argc, char **argv) {
  const char *dir = argv[1], *prefix = argv[2], *victim = argv[3];
  (void)argc; signal(SIGTERM, stop);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  int in = inotify_init1(0);
  if (dfd < 0 || in < 0 || inotify_add_watch(in, dir, IN_MOVED_TO | IN_CREATE) < 0) { perror("inotify"); return 1; }
  printf("ready\n"); fflush(stdout);
  char buf[65536] __attribute__((aligned(8)));
  size_t pl = strlen(prefix);
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n <= 0) return 1;
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *e = (struct inotify_event *)p;
      p += sizeof *e + e->len;
      if (e->len && strncmp(e->name, prefix, pl) == 0 &&
          syscall(SYS_renameat2, dfd, e->name, dfd, victim, 2) == 0) swaps++;
    }
  }
}
`;

const fx = makeFixture("latch-removal-trash-");
after(() => fx.cleanup());

test("attack: a removal's name exchanged with another file before its unlink: that file stays (g67)", async () => {
  const racerBin = compileRacer(RACER);
  fx.write({ "keep.txt": "x\n" });
  const host = await fx.host();
  after(() => host.close());
  const dir = path.join(host.root, "d");
  mkdirSync(dir);
  const p = (n: string) => path.join(dir, n);
  const racer = await startRacer(racerBin, [dir, ".rm.latch-", "victim.txt"]);
  let lost = 0;
  let ok = 0;
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const n of readdirSync(dir)) rmSync(p(n), { recursive: true, force: true });
      writeFileSync(p("a.txt"), `SRC ${i}\n`);
      writeFileSync(p("victim.txt"), `VICTIM ${i}\n`);
      const s = { session: `s${i}` };
      let r;
      if (i % 2 === 0) r = await host.call("move_file", { from: "d/a.txt", to: "d/b.txt" }, s);
      else {
        assert.equal((await host.call("read_file", { path: "d/a.txt" }, s)).status, "ok");
        r = await host.call("delete_file", { path: "d/a.txt" }, s);
      }
      if (r.status === "ok") ok++;
      const held = readdirSync(dir).map((n) => readFileSync(p(n), "utf8"));
      if (!held.includes(`VICTIM ${i}\n`)) lost++;
      if (i % 2 === 0) assert.ok(held.includes(`SRC ${i}\n`), `round ${i}: the moved file is somewhere in d`);
    }
  } finally {
    await racer.stop();
  }
  assert.ok(ok > ROUNDS / 2, `${ok} of ${ROUNDS} calls answered ok`);
  assert.equal(lost, 0, `${lost} of ${ROUNDS} rounds removed the file the racer swapped in`);
  assert.deepEqual(readdirSync(path.join(host.state.dir, "trash")), [], "nothing left in the trash");
});

test("what a killed removal left in the trash is swept when latch starts; a live process's entry stays", async () => {
  const dead = spawnSync("true").pid; // exited: its pid names no process now
  const trash = path.join(fx.state, "trash");
  mkdirSync(trash, { recursive: true });
  const left = `.rm.latch-${dead}-${TAG}00000001.tmp`;
  const live = `.rm.latch-${process.pid}-${TAG}00000002.tmp`;
  writeFileSync(path.join(trash, left), "removed before the kill\n");
  writeFileSync(path.join(trash, live), "being judged by a live latch\n");
  const host = await fx.host(); // every start (a server, a CLI call) sweeps it (create-host.ts)
  after(() => host.close());
  assert.equal(existsSync(path.join(trash, left)), false, "the dead process's entry is swept");
  assert.equal(existsSync(path.join(trash, live)), true, "a live process's entry is its own");
});
