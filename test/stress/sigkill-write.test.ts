// write_file, edit_file and sed killed with SIGKILL at random moments: the file always holds the whole
// old or the whole new content, never a mix. `npm run test:stress` kills each tool's writer 200 times,
// spread over several changes of a 2 MiB file from its start (warm-up included), so many land between
// the temp file's creation and its rename (counted by the temp files they leave). `npm test` kills
// each 8 times: half spread the same way, half aimed at the moment a temp file appears (inotify), so
// a write that tears (one not made through a temp file and a rename) or a temp file left behind
// fails every run (of 16 kills a tool, 10-15 landed between a temp file's creation and its rename;
// each writer's boot is most of the test's CPU, so 8 halve it). The two bugs these kills found have tests of their own that need no luck: a dead
// writer's temp file removed only by the next write of its own file (test/tools/write.test.ts), and
// a lock whose owner line was cut short by the kill, waited on for 30 s (test/fs/lock.test.ts). A
// killed writer's temp file is a hidden file beside the target (`.f.txt.latch-PID-HEX.tmp`) until a
// later change of a file in its folder removes it (each writer here is a new process: its first).
import assert from "node:assert/strict";
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { readdirSync, readFileSync, watch } from "node:fs";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { after, test } from "node:test";
import { build } from "esbuild";
import { makeFixture } from "../helpers/fixture.js";
import { FULL_STRESS, stressCount } from "../helpers/stress.js";

const LOOP = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/write-loop.mjs");
const TOOLS = ["write_file", "edit_file", "sed"] as const;
const KILLS = stressCount(8, 200, "LATCH_KILLS");
const LINES = 16384; // 2 MiB per content: a change takes tens of milliseconds, long enough to be cut
const SPREAD_MS = 600; // the slow first change (warm-up) and several more: a kill falls anywhere in a change
const TEMP_RE = /^\.f\.txt\.latch-(\d+)-[0-9a-f]{12}\.tmp$/;

const EXTERNAL = /^(better-sqlite3|@ast-grep\/[^/]+|@vscode\/ripgrep|mvdan-sh)$/;

/**
 * write-loop.mjs and the library as one file in `dir`: a writer then boots on about half the CPU
 * (no ESM loader walk over ~250 files), and 600 boots are most of this test's cost. Packages that
 * find files beside themselves stay outside, imported by their absolute paths.
 */
async function bundleLoop(dir: string): Promise<string> {
  const outfile = path.join(dir, "write-loop.mjs");
  const require = createRequire(import.meta.url);
  await build({
    entryPoints: [LOOP],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    banner: {
      js: "import { createRequire as latchCreateRequire } from 'node:module'; const require = latchCreateRequire(import.meta.url);",
    },
    plugins: [
      {
        name: "absolute-externals",
        setup: (b) => b.onResolve({ filter: EXTERNAL }, (a) => ({ path: require.resolve(a.path), external: true })),
      },
    ],
  });
  // The disclosure gate's scan thread loads scan-worker.js from beside its caller, here the bundle: a
  // folder with no package.json, so the worker is CommonJS.
  await build({
    entryPoints: [path.resolve(path.dirname(LOOP), "../../dist/disclose/scan-worker.js")],
    outfile: path.join(dir, "scan-worker.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "warning",
  });
  return outfile;
}

interface Writer {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Settles when the writer has loaded the library, or rejects if it ended before. */
  loaded: Promise<void>;
  out: string;
  err: string;
}

/** Boots a writer; it waits on stdin before touching the file, so it can boot while another runs. */
function bootWriter(loop: string, tool: string, root: string, state: string): Writer {
  const child = spawn(process.execPath, [loop, root, state, "f.txt", "a", "b"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, WRITE_LINES: String(LINES), WRITE_TOOL: tool },
  });
  const w: Writer = { child, loaded: Promise.resolve(), out: "", err: "" };
  child.stderr.on("data", (d) => (w.err += d));
  w.loaded = new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      w.out += d;
      if (w.out.startsWith("loaded\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`${tool} writer ended while loading (${code}): ${w.err}`)));
  });
  w.loaded.catch(() => undefined); // rejections are read when the writer's turn comes
  return w;
}

/** When a writer is killed: `delayMs` after it is ready, or as its `nth` temp file appears (in `dir`). */
type Aim = { delayMs: number } | { nth: number; dir: string };

/** Lets a booted writer start, kills it where `aim` says; resolves with the changes it made. */
async function killAfter(w: Writer, tool: string, aim: Aim): Promise<number> {
  await w.loaded;
  const exited = new Promise<void>((resolve, reject) => {
    w.child.once("exit", (code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`${tool} writer ended by itself (${code}): ${w.err}`)),
    );
  });
  const kill = () => w.child.kill("SIGKILL");
  let stopWatching = () => undefined as void;
  if ("nth" in aim) {
    // inotify reports the temp file's creation as it happens; the kill follows as soon as this process
    // hears of it, mostly while the new content is being written to it, synced, or renamed over the file.
    // Each change has a temp file of its own name: the writer's names, counted once each, count the
    // changes it has begun (the event of a rename away names the same file).
    const names = new Set<string>();
    const watcher = watch(aim.dir, (_event, name) => {
      const m = name === null ? null : TEMP_RE.exec(name);
      if (!m || Number(m[1]) !== w.child.pid || names.has(name!)) return;
      names.add(name!);
      if (names.size === aim.nth) kill();
    });
    stopWatching = () => watcher.close();
  } else {
    const ready = () => w.out.includes("ready\n");
    w.child.stdout.on("data", () => {
      if (ready()) setTimeout(kill, aim.delayMs);
    });
  }
  w.child.stdin.end("go\n");
  await exited.finally(stopWatching);
  return w.out.split("\n").filter((l) => l === "w").length;
}

const whole = (ch: string) => `${ch.repeat(127)}\n`.repeat(LINES);

async function killRounds(loop: string, tool: (typeof TOOLS)[number]): Promise<string> {
  const fx = makeFixture(`latch-kill-${tool}-`);
  try {
    fx.write({ "f.txt": whole("a") });
    const seen = new Set<string>();
    let midWrite = 0;
    let changes = 0;
    let next = bootWriter(loop, tool, fx.root, fx.state);
    for (let i = 0; i < KILLS; i++) {
      const w = next;
      if (i + 1 < KILLS) next = bootWriter(loop, tool, fx.root, fx.state);
      // npm test aims every other kill at a temp file, of the writer's first change, then of its second
      // (after one change completed: the file flips); the stress run spreads all of them.
      const aim: Aim =
        FULL_STRESS || i % 2 === 0
          ? { delayMs: Math.floor(Math.random() * SPREAD_MS) }
          : { nth: 1 + ((i >> 1) % 2), dir: fx.root };
      changes += await killAfter(w, tool, aim);
      // The killed writer may have held the file's lock: the next writer takes it over at once, or 10 s
      // on if the kill fell between taking it and writing its owner line (src/fs/lock.ts), so nothing
      // here clears it.
      const now = readFileSync(path.join(fx.root, "f.txt"), "utf8");
      const which = now === whole("a") ? "a" : now === whole("b") ? "b" : undefined;
      assert.ok(which, `${tool} round ${i}: torn file of ${now.length} bytes`);
      seen.add(which);
      // Anything else in the folder is a temp file of a dead writer.
      for (const name of readdirSync(fx.root).filter((n) => n !== "f.txt")) {
        const m = TEMP_RE.exec(name);
        assert.ok(m, `${tool} round ${i}: an unexpected file ${name}`);
        assert.throws(
          () => process.kill(Number(m[1]), 0),
          /ESRCH/,
          `${tool} round ${i}: ${name} belongs to a living process`,
        );
        if (Number(m[1]) === w.child.pid) midWrite++;
      }
    }
    assert.equal(seen.size, 2, `${tool}: the kills landed both before and after some changes completed`);
    assert.ok(midWrite > 0, `${tool}: no kill landed between a temp file's creation and its rename`);
    // The next change of the file, by the same tool in a new host, removes the dead writers' temp files.
    const { createHost } = await import("../../src/host/create-host.js");
    const host = await createHost({
      root: fx.root,
      stateDir: fx.state,
      config: { toolsPolicies: { local_fs: { _max_read_bytes: "8388608", _max_output_bytes: "8388608" } }, agents: {} },
    });
    try {
      const line = readFileSync(path.join(fx.root, "f.txt"), "utf8").slice(0, 128);
      assert.equal((await host.call("read_file", { path: "f.txt", force: true }, { session: "after" })).status, "ok");
      const args =
        tool === "write_file"
          ? { path: "f.txt", content: "x\n".repeat(LINES) }
          : tool === "edit_file"
            ? { path: "f.txt", old_string: line, new_string: "x\n", replace_all: true }
            : { path: "f.txt", pattern: line, replacement: "x\n", all: true };
      const out = await host.call(tool, args, { session: "after" });
      assert.equal(out.status, "ok", JSON.stringify(out));
    } finally {
      host.close();
    }
    assert.equal(readFileSync(path.join(fx.root, "f.txt"), "utf8"), "x\n".repeat(LINES));
    assert.deepEqual(readdirSync(fx.root), ["f.txt"]);
    return `${tool}: ${KILLS} kills, ${changes} changes completed, ${midWrite} kills between a temp file's creation and its rename`;
  } finally {
    fx.cleanup();
  }
}

test(`SIGKILL during write_file, edit_file and sed, ${KILLS} times each: never a torn file`, async (t) => {
  // One writer per tool at a time, each on its own file: the three run side by side, and all report.
  const fx = makeFixture("latch-kill-bundle-");
  after(() => fx.cleanup());
  const loop = await bundleLoop(fx.base);
  const outcomes = await Promise.allSettled(TOOLS.map((tool) => killRounds(loop, tool)));
  for (const o of outcomes) t.diagnostic(o.status === "fulfilled" ? o.value : `failed: ${String(o.reason)}`);
  for (const o of outcomes) if (o.status === "rejected") throw o.reason;
});
