// Attack (review g67): a process watching the folder (inotify) learns when a write makes its last
// check, and puts its own file at the name right then, so that the write's rename clobbers a file
// nobody read while the call says `ok`. The last look before the rename (src/fs/same-file.ts,
// assertPinHolds) read the name first and then the whole file again (~1 ms for 4 MiB), and an open
// of the file just before (atomic-write.ts) announced it: a racer timed on it hit 98 times in 100.
// The name is now looked at last, right before the rename, and nothing opens the file meanwhile.
// A rename cannot compare and swap, so microseconds stay (docs/security.md, known limits); this
// pins that the millisecond of the re-read is no longer one of them.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { compileRacer, startRacer } from "../helpers/racer.js";
import { stressCount } from "../helpers/stress.js";

const ROUNDS = stressCount(12, 100, "LATCH_LAST_LOOK_ROUNDS");

/**
 * Watches DIR: once a latch temp file of NAME is made there, the next read of NAME (IN_ACCESS, at
 * the end of the write's re-read of the file it replaces) starts DELAY µs of sleep (0 here: the
 * rename lands while latch compares the 4 MiB it read), then .plant is renamed onto NAME and a fresh
 * .plant made. One rename per temp file; prints "swap" after each, "swaps N" at SIGTERM.
 */
const RACER = String.raw`
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <limits.h>
static int swaps = 0;
static void onterm(int s) { (void)s; char b[32]; int l = snprintf(b, sizeof b, "swaps %d\n", swaps); write(1, b, l); _exit(0); }
static void plant(const char *p, int k) {
  char t[64]; int l = snprintf(t, sizeof t, "PLANT %d\n", k);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) { write(fd, t, l); close(fd); }
}
int main(int argc, char **argv) {
  const char *dir = argv[1], *name = argv[2]; int delay = atoi(argv[3]);
  signal(SIGTERM, onterm);
  int in = inotify_init1(0);
  if (in < 0 || inotify_add_watch(in, dir, IN_CREATE | IN_ACCESS | IN_MOVED_TO) < 0) { perror("inotify"); return 1; }
  char prefix[PATH_MAX], target[PATH_MAX], p[PATH_MAX];
  snprintf(prefix, sizeof prefix, ".%s.latch-", name);
  snprintf(target, sizeof target, "%s/%s", dir, name);
  snprintf(p, sizeof p, "%s/.plant", dir);
  plant(p, 0);
  printf("ready\n"); fflush(stdout);
  int armed = 0;
  char buf[65536] __attribute__((aligned(8)));
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n <= 0) return 1;
    for (char *q = buf; q < buf + n;) {
      struct inotify_event *e = (struct inotify_event *)q;
      q += sizeof *e + e->len;
      if (!e->len) continue;
      if ((e->mask & IN_CREATE) && strncmp(e->name, prefix, strlen(prefix)) == 0) armed = 1;
      else if ((e->mask & IN_MOVED_TO) && strcmp(e->name, name) == 0) armed = 0;
      else if ((e->mask & IN_ACCESS) && armed && strcmp(e->name, name) == 0) {
        armed = 0;
        usleep(delay);
        if (rename(p, target) == 0) { swaps++; printf("swap\n"); fflush(stdout); }
        plant(p, swaps);
      }
    }
  }
}
`;

const fx = makeFixture("latch-last-look-");
after(() => fx.cleanup());

test("attack: a file put at the name on the signal of the write's last look is not clobbered (g67)", async () => {
  const racerBin = compileRacer(RACER);
  fx.write({ "d/keep.txt": "x\n" });
  const host = await fx.host();
  after(() => host.close());
  const dir = path.join(host.root, "d");
  const file = path.join(dir, "f");
  mkdirSync(dir, { recursive: true });
  // 4 MiB: in memory (under the streamed edits' 8 MiB), and a re-read of a millisecond or so.
  const filler = `${"y".repeat(63)}\n`.repeat((4 << 20) / 64);
  const racer = await startRacer(racerBin, [dir, "f", "0"]);
  const swaps = () =>
    racer
      .output()
      .split("\n")
      .filter((l) => l === "swap").length;
  let fired = 0;
  let clobbered = 0;
  let refused = 0;
  try {
    for (let i = 0; i < ROUNDS; i++) {
      writeFileSync(file, `X-${i}\n${filler}`); // the user's file, as the model reads it
      const read = await host.call("read_file_range", { path: "d/f", start_line: 1, end_line: 2 }, { session: "s" });
      assert.equal(read.status, "ok", JSON.stringify(read).slice(0, 500));
      const swapsBefore = swaps();
      const r = await host.call(
        "edit_file",
        { path: "d/f", old_string: `X-${i}\n`, new_string: `Y-${i}\n` },
        { session: "s" },
      );
      await sleep(30); // the racer's line, if it renamed during the call
      const swapped = swaps() > swapsBefore;
      const head = readFileSync(file, "utf8").slice(0, 16).split("\n")[0];
      if (swapped) fired++;
      if (r.status !== "ok") {
        refused++;
        // Before the rename: changed since read; right after it: the name holds the racer's file.
        assert.match(
          JSON.stringify(r),
          /changed since you read it|now holds that process's file/,
          JSON.stringify(r).slice(0, 500),
        );
        assert.match(head, /^PLANT/, "a refused write leaves the racer's file at the name");
      } else if (swapped && head === `Y-${i}`) clobbered++;
    }
  } finally {
    await racer.stop();
  }
  assert.ok(fired >= ROUNDS / 2, `the racer renamed its file in ${fired} of ${ROUNDS} calls`);
  // Each rename lands during the re-read's compare (refused) or after the write (the racer's own later
  // change). The name looked at before the re-read, 30 of 30 were clobbered. One in reserve for a
  // racer held off the CPU past the compare under load, into the µs before the rename.
  assert.ok(clobbered <= 1, `${clobbered} of ${ROUNDS} writes clobbered the racer's file (${refused} refused)`);
});
