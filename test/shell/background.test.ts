// Background processes: start/read/input/kill, the per-session limit, and that none outlives its
// session, its kill or the host; memory stays flat while one prints a gigabyte (320 MB in npm test).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import type { Host } from "../../src/host/create-host.js";
import { RollingOutput } from "../../src/shell/background.js";
import { makeFixture } from "../helpers/fixture.js";
import { stressCount } from "../helpers/stress.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host({ approver: yesApprover }));
const call = async (tool: string, args: Record<string, unknown>, session = "s"): Promise<any> =>
  (await host()).call(tool, args, { session });

/** Pids of live (not zombie) processes whose argv is exactly `argv`. */
// Sleep durations unique to this run: another suite on the same machine (a second checkout, another
// Node) runs these tests too, and its sleeps must not count as ours.
const RUN_TAG = String(process.pid % 100_000).padStart(5, "0");
/** The most text one process_input call takes. */
const PIECE = 64 * 1024;

function living(argv: string[]): number[] {
  const want = argv.join("\0") + "\0";
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") !== want) continue;
      const state = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.[0];
      if (state !== "Z") out.push(Number(name));
    } catch {
      // gone while we looked
    }
  }
  return out;
}

test("rolling output: the head and the newest tail are read by offset, and what fell between is counted", () => {
  const o = new RollingOutput("stdout");
  const line = (i: number) => Buffer.from(`${String(i).padStart(9, "0")}\n`); // 10 bytes a line
  for (let i = 0; i < 40_000; i++) o.write(line(i)); // 400,000 bytes: over 16 KiB + 256 KiB
  assert.equal(o.total, 400_000);
  const start = o.read(0, 100);
  assert.equal(start.to, 400_000);
  assert.equal(start.text.length, 100, "at most max bytes, the newest");
  assert.equal(start.text, Array.from({ length: 10 }, (_, k) => line(39_990 + k).toString()).join(""));
  assert.equal(start.dropped, 400_000 - 100);
  const head = o.read(0, 1 << 20);
  assert.equal(head.text.slice(0, 20), "000000000\n000000001\n");
  assert.equal(head.dropped + head.text.length, 400_000);
  assert.ok(head.dropped > 0 && head.dropped <= 400_000 - 16 * 1024 - 256 * 1024);
  const last = o.read(400_000 - 20, 1 << 20);
  assert.deepEqual(
    [last.text, last.dropped, last.from],
    [line(39_998).toString() + line(39_999).toString(), 0, 400_000 - 20],
  );
  assert.equal(o.read(400_000, 10).text, "");
  assert.match(o.result().text, /latch cut \d+ bytes from the middle of stdout/);
});

describe("background processes", () => {
  test("start returns an id at once; output, input and exit are readable", async () => {
    const r = await call("local_shell", { command: "cat", background: true });
    assert.equal(r.status, "ok", JSON.stringify(r));
    const id = r.result.id;
    assert.equal((await call("process_input", { id, text: "hello there\n" })).status, "ok");
    assert.ok(await waitFor(async () => (await call("process_output", { id })).result.stdout.text.includes("hello")));
    const out = await call("process_output", { id });
    assert.equal(out.result.running, true);
    const next = await call("process_output", { id, since: out.result.stdout.to });
    assert.equal(next.result.stdout.text, "");
    const k = await call("process_kill", { id });
    assert.equal(k.status, "ok", JSON.stringify(k));
    const done = await call("process_output", { id });
    assert.equal(done.result.running, false);
    assert.equal((await call("process_input", { id, text: "x" })).status, "error");
    // Another session cannot see or touch it.
    assert.equal((await call("process_output", { id }, "other")).status, "error");
  });

  test("a finished process reports its exit code", async () => {
    const r = await call("local_shell", { command: "sh", args: ["-c", "echo done; exit 3"], background: true });
    const id = r.result.id;
    assert.ok(await waitFor(async () => !(await call("process_output", { id })).result.running));
    const out = await call("process_output", { id });
    assert.equal(out.result.exit_code, 3);
    assert.equal(out.result.stdout.text, "done\n");
  });

  // 100 cycles under LATCH_STRESS=1; 24 in `npm test`, past the 16 finished runs kept. A kill waits for
  // the whole run to be gone, up to its 2 s SIGTERM grace: a process left behind shows on the first.
  const cycles = stressCount(24, 100);
  test(`${cycles} start/read/kill cycles leave no process`, async () => {
    const argv = ["sleep", `301${RUN_TAG}`];
    for (let i = 0; i < cycles; i++) {
      const r = await call("local_shell", { command: argv.join(" "), background: true }, "cycles");
      assert.equal(r.status, "ok", JSON.stringify(r));
      assert.equal((await call("process_output", { id: r.result.id }, "cycles")).status, "ok");
      assert.equal((await call("process_kill", { id: r.result.id }, "cycles")).status, "ok");
    }
    assert.deepEqual(living(argv), []);
    const list = (await call("process_list", {}, "cycles")).result;
    assert.equal(list.processes.length, 16, "only the newest 16 finished runs are kept");
    assert.ok(list.processes.every((p: any) => p.running === false));
    assert.match(list.evicted, new RegExp(`^${cycles - 16} finished runs evicted`));
  });

  test("at most 8 per session; a session's end stops all of its processes and leaves none", async () => {
    const argv = ["sleep", `302${RUN_TAG}`];
    for (let i = 0; i < 8; i++)
      assert.equal((await call("local_shell", { command: argv.join(" "), background: true }, "limit")).status, "ok");
    const ninth = await call("local_shell", { command: argv.join(" "), background: true }, "limit");
    assert.equal(ninth.status, "refused");
    assert.match(ninth.reason, /limit is 8/);
    assert.ok(await waitFor(() => living(argv).length === 8), "all 8 are running");
    const n = await (await host()).endSession("limit");
    assert.equal(n, 8);
    assert.deepEqual(living(argv), []);
    assert.deepEqual((await call("process_list", {}, "limit")).result.processes, []);
  });

  test("closing the host (latch exiting) leaves no background process", async () => {
    const h = await fx.host({ approver: yesApprover });
    const argv = ["sleep", `303${RUN_TAG}`];
    for (let i = 0; i < 3; i++)
      await h.call("local_shell", { command: argv.join(" "), background: true }, { session: "x" });
    assert.ok(await waitFor(() => living(argv).length === 3));
    await h.shutdown("test");
    assert.deepEqual(living(argv), []);
  });

  test("input to a process that never reads: every answer says what it took, and latch holds at most the cap", async () => {
    // LATCH_STRESS=1: 400 calls of the largest text a call takes; by default enough to fill the queue.
    const calls = stressCount(24, 400);
    const r = await call("local_shell", { command: "sleep", args: [`304${RUN_TAG}`], background: true }, "deaf");
    assert.equal(r.status, "ok", JSON.stringify(r));
    const id = r.result.id;
    const piece = "x".repeat(PIECE);
    const answers: string[] = [];
    let queued = 0;
    for (let i = 0; i < calls; i++) {
      const a = await call("process_input", { id, text: piece, wait_ms: 0 }, "deaf");
      answers.push(a.status);
      if (a.status === "ok") {
        assert.equal(a.result.taken_bytes + a.result.queued_bytes, PIECE, JSON.stringify(a.result));
      } else {
        assert.equal(a.status, "refused", JSON.stringify(a));
        assert.match(a.reason, /has not read its input: \d+ bytes are still queued .* at most 1 MiB per process/);
      }
      const listed = (await call("process_list", {}, "deaf")).result;
      const me = listed.processes.find((p: any) => p.id === id);
      queued = me.input_queued_bytes;
      assert.ok(queued <= 1 << 20, `latch holds ${queued} bytes of input`);
      assert.ok(listed.held_bytes <= (1 << 20) + 64 * 1024, `the session holds ${listed.held_bytes} bytes`);
    }
    const accepted = answers.filter((s) => s === "ok").length;
    // Taken until the queue is full, refused from then on: the 1 MiB queue, and what the pipe took.
    assert.deepEqual(answers, [...Array(accepted).fill("ok"), ...Array(calls - accepted).fill("refused")]);
    assert.ok(accepted >= 16, `accepted ${accepted}`);
    // The pipe (64 KiB on Linux; up to 1 MiB if raised) is all a process that never reads can take.
    assert.ok(accepted * PIECE - queued <= 1 << 20, `the pipe took ${accepted * PIECE - queued}`);
    assert.equal((await call("process_kill", { id }, "deaf")).status, "ok");
    assert.deepEqual(living(["sleep", `304${RUN_TAG}`]), []);
  });

  test("input longer than one call takes is refused by the schema, naming the limit", async () => {
    const r = await call("local_shell", { command: "cat", background: true }, "long");
    const a = await call("process_input", { id: r.result.id, text: "x".repeat(PIECE + 1) }, "long");
    assert.deepEqual([a.status, a.code], ["error", "EINVAL"]);
    assert.match(a.message, /Expected `text` to be at most 65536 characters/);
    assert.equal((await call("process_kill", { id: r.result.id }, "long")).status, "ok");
  });

  test("input to a process that reads is all taken, in order", async () => {
    const r = await call(
      "local_shell",
      { command: "sh", args: ["-c", "head -c 2400000 | wc -c"], background: true },
      "reader",
    );
    const id = r.result.id;
    const chunk = "y".repeat(60_000);
    for (let i = 0; i < 40; i++) {
      const a = await call("process_input", { id, text: chunk, wait_ms: 20_000 }, "reader");
      assert.equal(a.status, "ok", JSON.stringify(a));
      assert.deepEqual([a.result.taken_bytes, a.result.queued_bytes], [60_000, 0]);
    }
    assert.ok(await waitFor(async () => !(await call("process_output", { id }, "reader")).result.running));
    const out = (await call("process_output", { id }, "reader")).result;
    assert.deepEqual([out.exit_code, out.stdout.text.trim()], [0, "2400000"]);
  });

  test("finished runs are kept within a count; the eviction is stated", async () => {
    // LATCH_STRESS=1: the fault round's 1,000 finished runs in one session.
    const runs = stressCount(60, 1000);
    let first = "";
    for (let i = 0; i < runs; i++) {
      const r = await call("local_shell", { command: "echo", args: [`run ${i}`], background: true }, "many");
      assert.equal(r.status, "ok", JSON.stringify(r));
      first ||= r.result.id;
      assert.ok(await waitFor(async () => !(await call("process_output", { id: r.result.id }, "many")).result.running));
    }
    const list = (await call("process_list", {}, "many")).result;
    assert.equal(list.processes.length, 16);
    assert.equal(list.evicted.split(" ")[0], String(runs - 16));
    // The newest are the ones kept, with their output.
    const newest = list.processes.at(-1);
    assert.equal((await call("process_output", { id: newest.id }, "many")).result.stdout.text, `run ${runs - 1}\n`);
    const gone = await call("process_output", { id: first }, "many");
    assert.equal(gone.status, "error");
    assert.match(gone.message, /kept 10 min, the newest 16/);
  });

  // 1 GB under test:stress; in npm test 320 MB, still over twice the RSS bound below, so a buffer that
  // kept the output fails it (1 GB was ~8 s of this file's CPU: the host reads every byte).
  const printedBytes = stressCount(320, 1000) * 1_000_000;
  test(`memory stays flat while a background process prints ${printedBytes / 1e6} MB`, async () => {
    const r = await call(
      "local_shell",
      { command: "yes", args: ["0123456789abcdef0123456789abcdef"], background: true },
      "big",
    );
    assert.equal(r.status, "ok", JSON.stringify(r));
    const id = r.result.id;
    const before = process.memoryUsage().rss;
    let peak = before;
    let printed = 0;
    const ok = await waitFor(async () => {
      peak = Math.max(peak, process.memoryUsage().rss);
      const o = (await call("process_output", { id, since: 1e12 }, "big")).result;
      printed = o.stdout.to;
      return printed >= printedBytes;
    }, 400_000);
    assert.ok(ok, `${printedBytes} bytes were printed (${printed} bytes)`);
    const tail = (await call("process_output", { id, since: printed - 66 }, "big")).result.stdout.text;
    // `yes` is still writing, in pipe-sized chunks that do not end on a line: the tail may start and end
    // mid-line, but whole lines of the printed text lie between.
    assert.match(tail, /^[0-9a-f]*\n(?:0123456789abcdef0123456789abcdef\n)+[0-9a-f]*$/);
    assert.equal((await call("process_kill", { id }, "big")).status, "ok");
    assert.ok(peak - before < 150 * 1024 * 1024, `RSS grew ${Math.round((peak - before) / 2 ** 20)} MiB`);
  });
});
