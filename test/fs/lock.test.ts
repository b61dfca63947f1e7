// The mutation lock across processes: a dead holder is taken over at once, a live one never is. A lock
// is a file holding its owner line; an earlier latch's lock, a folder holding the line in `owner`,
// is honoured and taken over the same way (each such case runs with both layouts).
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, test } from "node:test";
import { lockMode, locksRemoved, ownerAlive, withPathLock } from "../../src/fs/lock.js";
import { PLACE, STARTED } from "../../src/fs/owner.js";
import { sha256 } from "../../src/fs/text.js";
import { makeFixture } from "../helpers/fixture.js";

const HOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/hold-lock.ts");
const fx = makeFixture("latch-lock-");
const base = fx.base;
after(() => fx.cleanup());

let n = 0;
function fresh(): { locks: string; target: string; lockDir: string } {
  const locks = path.join(base, `locks-${++n}`);
  mkdirSync(locks);
  const target = path.join(base, `file-${n}.txt`);
  return { locks, target, lockDir: path.join(locks, sha256(target) + ".lock") };
}

/** What is in a locks folder besides this process's own owner file (which stays while it runs). */
const leftIn = (locks: string) => readdirSync(locks).filter((n) => n !== `owner-${PLACE}-${process.pid}-${STARTED}`);

type Layout = "file" | "folder";
const LAYOUTS: Layout[] = ["file", "folder"];

/** A lock left at `lock` as a holder of this `layout` left it: with `owner` as its line (none: killed before writing one). */
function leaveLock(lock: string, layout: Layout, owner: string | undefined): void {
  if (layout === "file") writeFileSync(lock, owner ?? "");
  else {
    mkdirSync(lock);
    if (owner !== undefined) writeFileSync(path.join(lock, "owner"), owner);
  }
}

async function holdInChild(locks: string, target: string, inNewPidNamespace = false): Promise<ChildProcess> {
  const argv = [process.execPath, "--import", "tsx", HOLDER, locks, target];
  // unshare(1) from util-linux; as root (CI is) no user namespace is needed.
  const [cmd, ...args] = inNewPidNamespace ? ["unshare", "--pid", "--fork", "--mount-proc", ...argv] : argv;
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => d.toString().includes("held") && resolve());
    child.on("exit", (code) => reject(new Error(`the holder exited (${code}) before taking the lock`)));
  });
  return child;
}

const exited = (c: ChildProcess) =>
  new Promise((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve(null) : c.on("exit", resolve)));

describe("a writer killed while holding the lock", () => {
  test("SIGKILL: the next writer takes the lock over without waiting for it to age", async () => {
    const { locks, target, lockDir } = fresh();
    const child = await holdInChild(locks, target);
    const line = readFileSync(lockDir, "utf8");
    assert.match(line, new RegExp(`^${PLACE} ${child.pid} \\d+ [0-9a-f]{12}\\n$`), "a file with the owner line");
    const ownerFile = path.join(locks, `owner-${PLACE}-${child.pid}-${line.split(" ")[2]}`);
    assert.equal(statSync(lockDir).ino, statSync(ownerFile).ino, "the lock is a link of the holder's owner file");
    child.kill("SIGKILL");
    await exited(child);
    // waitMs 0: one look, no waiting; only the dead-owner check can let this through
    const out = await withPathLock(locks, target, async () => "ran", { waitMs: 0 });
    assert.equal(out, "ran");
    assert.equal(existsSync(lockDir), false, "released after use");
    await locksRemoved(); // the renamed folders go on the thread pool, after the release
    assert.deepEqual(leftIn(locks), [], "nothing left of the break or the release");
  });

  test("a live holder in another process is never taken over: ELOCKED, then the lock once it lets go", async () => {
    const { locks, target } = fresh();
    const child = await holdInChild(locks, target);
    await assert.rejects(
      withPathLock(locks, target, async () => "ran", { waitMs: 200 }),
      { code: "ELOCKED" },
    );
    const waiting = withPathLock(locks, target, async () => "ran", { waitMs: 20_000 });
    child.stdin!.end();
    assert.equal(await waiting, "ran");
  });

  test("a live holder in another pid namespace (a sandbox sharing the state dir) is not taken for dead", async () => {
    const { locks, target, lockDir } = fresh();
    const child = await holdInChild(locks, target, true);
    const owner = readFileSync(lockDir, "utf8");
    assert.equal(
      owner.split(" ")[1],
      "1",
      "the holder is pid 1 in its namespace (pid 1 here is init, alive, started at another time)",
    );
    await assert.rejects(
      withPathLock(locks, target, async () => "ran", { waitMs: 300 }),
      { code: "ELOCKED" },
    );
    assert.equal(readFileSync(lockDir, "utf8"), owner, "its lock was left alone");
    const waiting = withPathLock(locks, target, async () => "ran", { waitMs: 20_000 });
    child.stdin!.end();
    assert.equal(await waiting, "ran");
  });

  for (const layout of LAYOUTS) {
    test(`a reused pid (same pid, another start time) is a dead owner (${layout})`, async () => {
      const { locks, target, lockDir } = fresh();
      leaveLock(lockDir, layout, `${PLACE} ${process.pid} 1 t\n`); // this pid, but started at tick 1
      assert.equal(await withPathLock(locks, target, async () => "ran", { waitMs: 0 }), "ran");
      assert.equal(existsSync(lockDir), false, "released after use");
      await locksRemoved();
      assert.deepEqual(leftIn(locks), [], "nothing left of the break or the release");
    });

    test(`an owner of another machine, boot or pid namespace is alive while it touches the lock, gone 30 s after (${layout})`, async () => {
      const { locks, target, lockDir } = fresh();
      leaveLock(lockDir, layout, `0123456789ab 1 1 t\n`); // pid 1 runs here, but it is not that pid 1
      await assert.rejects(
        withPathLock(locks, target, async () => "ran", { waitMs: 0 }),
        { code: "ELOCKED" },
      );
      assert.ok(existsSync(lockDir), "left alone while fresh");
      const old = new Date(Date.now() - 60_000);
      utimesSync(lockDir, old, old);
      assert.equal(await withPathLock(locks, target, async () => "ran", { waitMs: 0 }), "ran");
    });
  }

  test("a live holder's lock folder (an earlier latch running beside this one) is never taken over", async () => {
    const { locks, target, lockDir } = fresh();
    const theirs = `${PLACE} ${process.pid} ${STARTED} earlier-latch\n`; // a live process of this place
    leaveLock(lockDir, "folder", theirs);
    await assert.rejects(
      withPathLock(locks, target, async () => "ran", { waitMs: 100 }),
      { code: "ELOCKED" },
    );
    assert.equal(readFileSync(path.join(lockDir, "owner"), "utf8"), theirs, "its lock was left alone");
  });

  test("a hold whose lock was taken over meanwhile does not remove the new holder's lock", async () => {
    const { locks, target, lockDir } = fresh();
    const theirs = `${PLACE} ${process.pid} ${STARTED} someone-else\n`;
    await withPathLock(locks, target, async () => {
      unlinkSync(lockDir); // as if another hold had taken it over
      writeFileSync(lockDir, theirs);
    });
    assert.equal(readFileSync(lockDir, "utf8"), theirs, "the other hold's lock is left in place");
  });

  test("a hold whose lock was taken over by a link to another owner file does not remove it", async () => {
    const { locks, target, lockDir } = fresh();
    const theirs = `${PLACE} ${process.pid + 1} ${STARTED} their-file\n`;
    const theirFile = path.join(locks, `owner-${PLACE}-${process.pid + 1}-${STARTED}`);
    await withPathLock(locks, target, async () => {
      unlinkSync(lockDir); // another process took it over, the way latch takes a lock: a link to its owner file
      writeFileSync(theirFile, theirs);
      linkSync(theirFile, lockDir);
    });
    assert.equal(readFileSync(lockDir, "utf8"), theirs, "their lock is left in place");
    assert.equal(statSync(lockDir).ino, statSync(theirFile).ino);
  });

  test("a hold whose owner file went meanwhile still removes its own lock, known by its line", async () => {
    const { locks, target, lockDir } = fresh();
    const own = path.join(locks, `owner-${PLACE}-${process.pid}-${STARTED}`);
    await withPathLock(locks, target, async () => {
      assert.equal(statSync(lockDir).ino, statSync(own).ino, "the lock is a link to this process's owner file");
      unlinkSync(own); // as another host of this process does when it ends
    });
    assert.equal(existsSync(lockDir), false, "the lock is gone at release");
    await withPathLock(locks, target, async () => {
      assert.equal(statSync(lockDir).ino, statSync(own).ino, "the owner file is written again for the next lock");
    });
    assert.deepEqual(leftIn(locks), []);
  });

  // A holder killed between creating the lock and writing its owner line, or in the middle of it (a
  // folder's: between mkdir and the line, or between creating the owner file and writing it: an
  // empty file, what failed CI once, its next writer waited for the 30 s of an unknown place).
  for (const [what, layout, owner] of [
    ["no owner line", "file", undefined],
    ["an owner line cut short", "file", `${PLACE} 1`],
    ["no owner file", "folder", undefined],
    ["an empty owner file", "folder", ""],
    ["an owner line cut short", "folder", `${PLACE} 1`],
  ] as const) {
    test(`a lock (${layout}) with ${what} is young until 10 s old, then stale`, async () => {
      const { locks, target, lockDir } = fresh();
      leaveLock(lockDir, layout, owner);
      const age = (ms: number) => {
        const then = new Date(Date.now() - ms);
        utimesSync(lockDir, then, then);
      };
      age(8_000);
      await assert.rejects(
        withPathLock(locks, target, async () => "ran", { waitMs: 0 }),
        { code: "ELOCKED" },
      );
      age(12_000);
      assert.equal(await withPathLock(locks, target, async () => "ran", { waitMs: 0 }), "ran");
      assert.equal(existsSync(lockDir), false, "released after use");
    });
  }

  test("ownerAlive reads place, pid and start time", () => {
    const self = readFileSync(`/proc/${process.pid}/stat`, "utf8");
    const started = self.slice(self.lastIndexOf(")") + 2).split(" ")[19];
    assert.equal(started, STARTED);
    assert.equal(ownerAlive(`${PLACE} ${process.pid} ${started} t`), true);
    assert.equal(ownerAlive(`${PLACE} ${process.pid} ${Number(started) + 1} t`), false);
    assert.equal(ownerAlive(`${PLACE} 0 1 t`), false);
    assert.equal(ownerAlive(`${PLACE} garbage`), false);
    assert.equal(
      ownerAlive(`0123456789ab ${process.pid} ${started} t`),
      undefined,
      "another place cannot be checked by pid",
    );
  });
});

describe("where hard links are refused", () => {
  test("a lock is a file of its own, with this hold's owner line, gone at release", async () => {
    const { locks, target, lockDir } = fresh();
    lockMode.links = false;
    try {
      await withPathLock(locks, target, async () => {
        assert.equal(statSync(lockDir).nlink, 1);
        assert.match(readFileSync(lockDir, "utf8"), new RegExp(`^${PLACE} ${process.pid} ${STARTED} [0-9a-f]{12}\\n$`));
      });
      assert.deepEqual(readdirSync(locks), []);
      leaveLock(lockDir, "file", `${PLACE} ${process.pid} 1 t\n`); // a dead owner's
      assert.equal(await withPathLock(locks, target, async () => "ran", { waitMs: 0 }), "ran");
    } finally {
      lockMode.links = true;
    }
  });
});

describe("many writers at once", () => {
  test("in-process calls on one path run one at a time; no update is lost", async () => {
    const { locks, target } = fresh();
    writeFileSync(target, "0");
    let inside = 0;
    await Promise.all(
      Array.from({ length: 40 }, () =>
        withPathLock(locks, target, async () => {
          inside++;
          assert.equal(inside, 1, "two holders at once");
          const v = Number(readFileSync(target, "utf8"));
          await new Promise((r) => setImmediate(r));
          writeFileSync(target, String(v + 1));
          inside--;
        }),
      ),
    );
    assert.equal(readFileSync(target, "utf8"), "40");
  });
});

describe("waiters in one process", () => {
  test("a holder that unlocks early lets the next one in before it ends, and its lock is gone then", async () => {
    const { locks, target, lockDir } = fresh();
    const order: string[] = [];
    let finish!: () => void;
    const first = withPathLock(locks, target, async (unlock) => {
      order.push("first holds");
      unlock();
      assert.equal(existsSync(lockDir), false, "released at unlock()");
      unlock(); // a second call is nothing
      await new Promise<void>((r) => (finish = r));
      order.push("first ends");
    });
    await withPathLock(locks, target, async () => void order.push("second holds"), { waitMs: 2_000 });
    finish();
    await first;
    assert.deepEqual(order, ["first holds", "second holds", "first ends"]);
    assert.deepEqual(leftIn(locks), []);
  });

  /** Holds for `ms` (or until `ms` settles) under the lock of a fresh file; `order` is who held it, and never two at once. */
  function holders() {
    const { locks, target } = fresh();
    const order: string[] = [];
    let inside = 0;
    const hold = (who: string, ms: number | Promise<unknown>, waitMs = 20_000) =>
      withPathLock(
        locks,
        target,
        async () => {
          order.push(who);
          inside++;
          assert.equal(inside, 1, "two holders at once");
          await (typeof ms === "number" ? new Promise((r) => setTimeout(r, ms)) : ms);
          inside--;
        },
        { waitMs },
      );
    return { order, hold };
  }

  test("take the lock in the order they came: an early waiter is not starved by a stream of newer ones", async () => {
    const { order, hold } = holders();
    const first = hold("first", 300);
    await new Promise((r) => setTimeout(r, 20));
    // The early waiter's deadline is shorter than the newcomers' holds together: it lands only if it
    // goes next. Polling alone let every newcomer (polling at 2 ms, the early one by then at 50 ms) in first.
    const early = hold("early", 5, 2_000);
    const newcomers: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      await new Promise((r) => setTimeout(r, 10));
      newcomers.push(hold(`new-${i}`, 80)); // 30 × 80 ms: more than the early one waits
    }
    await Promise.all([first, early, ...newcomers]);
    assert.deepEqual(order, ["first", "early", ...newcomers.map((_, i) => `new-${i}`)]);
  });

  test("a queued waiter still gives up at its deadline; the ones behind it keep their turn", async () => {
    const { order, hold } = holders();
    // `first` holds until `impatient` has given up, however slow the machine: a fixed hold could end
    // before the 100 ms deadline when timers run late, and then `impatient` would simply get its turn.
    let impatientSettled!: () => void;
    const first = hold("first", new Promise<void>((r) => (impatientSettled = r)));
    const patient = hold("patient", 10);
    // Queued behind `patient`, so it never polls the lock: only the queue's own deadline can end its wait.
    const impatient = hold("impatient", 10, 100).then(
      () => "held",
      (err: { code?: string }) => err.code,
    );
    const outcome = await impatient;
    impatientSettled();
    assert.equal(outcome, "ELOCKED");
    const late = hold("late", 10);
    await Promise.all([first, patient, late]);
    assert.deepEqual(order, ["first", "patient", "late"]);
  });
});

describe("a zombie holds no lock", () => {
  test("a lock whose owner is a zombie (killed, not yet reaped) is taken over at once", async () => {
    // sh starts `sleep 0.2` in the background and execs `sleep 5`, which never reaps it: it ends as a zombie.
    const sh = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const zombie = Number(
        await new Promise<string>((ok) => sh.stdout.once("data", (b: Buffer) => ok(b.toString().trim()))),
      );
      const state = () => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1][0];
      for (let i = 0; i < 100 && state() !== "Z"; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(state(), "Z");
      const started = readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1].split(" ")[19];
      assert.equal(ownerAlive(`${PLACE} ${zombie} ${started} cafe\n`), false);
      // Its lock on a file: the next writer takes it over instead of waiting.
      const fx = makeFixture();
      try {
        const locks = path.join(fx.state, "locks");
        mkdirSync(locks, { recursive: true });
        const target = path.join(fx.root, "z.txt");
        const lockPath = path.join(locks, sha256(target) + ".lock");
        mkdirSync(lockPath);
        writeFileSync(path.join(lockPath, "owner"), `${PLACE} ${zombie} ${started} cafe\n`);
        let ran = false;
        await withPathLock(locks, target, async () => void (ran = true), { waitMs: 1_000 });
        assert.equal(ran, true);
      } finally {
        fx.cleanup();
      }
    } finally {
      sh.kill("SIGKILL");
    }
  });
});
