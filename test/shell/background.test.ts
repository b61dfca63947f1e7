// Background processes: start/read/input/kill, the per-session limit, and that none outlives its
// session, its kill or the host; memory stays flat while one prints a gigabyte.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import type { Host } from "../../src/host/create-host.js";
import { RollingOutput } from "../../src/shell/background.js";
import { makeFixture } from "../helpers/fixture.js";
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

  test("100 start/read/kill cycles leave no process", async () => {
    const argv = ["sleep", `301${RUN_TAG}`];
    for (let i = 0; i < 100; i++) {
      const r = await call("local_shell", { command: argv.join(" "), background: true }, "cycles");
      assert.equal(r.status, "ok", JSON.stringify(r));
      assert.equal((await call("process_output", { id: r.result.id }, "cycles")).status, "ok");
      assert.equal((await call("process_kill", { id: r.result.id }, "cycles")).status, "ok");
    }
    assert.deepEqual(living(argv), []);
    const list = (await call("process_list", {}, "cycles")).result.processes;
    assert.equal(list.length, 100);
    assert.ok(list.every((p: any) => p.running === false));
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

  test("memory stays flat while a background process prints 1 GB", async () => {
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
      return printed >= 1_000_000_000;
    }, 400_000);
    assert.ok(ok, `a gigabyte was printed (${printed} bytes)`);
    const tail = (await call("process_output", { id, since: printed - 66 }, "big")).result.stdout.text;
    // `yes` is still writing, in pipe-sized chunks that do not end on a line: the tail may start and end
    // mid-line, but whole lines of the printed text lie between.
    assert.match(tail, /^[0-9a-f]*\n(?:0123456789abcdef0123456789abcdef\n)+[0-9a-f]*$/);
    assert.equal((await call("process_kill", { id }, "big")).status, "ok");
    assert.ok(peak - before < 150 * 1024 * 1024, `RSS grew ${Math.round((peak - before) / 2 ** 20)} MiB`);
  });
});
