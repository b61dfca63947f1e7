// Issue 26 for the walks: a contained background process (local_shell, background: true, under the
// built-in auto_edit envelope: it runs with no question) swaps a workspace folder `d` between a real
// folder and a link to a folder outside, while list_dir, find_files, grep (ripgrep and the JS engine),
// count_stats and ast_search walk the tree over and over. Each walk lists folders through descriptors
// opened without following a link, and ripgrep's finds are confirmed through descriptors
// (src/browse/confirm.ts): no result may hold a byte or a name from outside. The outside folder holds
// files named like d's (with other bytes) and files only it has, whose names carry the marker.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { expectOk } from "../helpers/expect.js";
import { waitFor } from "../helpers/wait.js";
import {
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  SYSTEM_PATH,
  type SandboxFixture,
} from "../sandbox/sandbox-fixture.js";
import { forMs, makeOutside, RACE_MS, snapshot, swapper, Tally, type Outside } from "./race-fixture.js";

let fx: SandboxFixture;
let outside: Outside;
let racer: { host: Host; id: string };
const hosts = new Map<string, Host>();
/** Bytes of every file inside: a count above it read something else. */
let insideBytes = 0;
/** Bytes of the files in d. */
let dBytes = 0;

before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-race-walks-");
  outside = makeOutside(path.join(fx.base, "away"), ["credentials", "x.txt", "a.ts"]);
  // Only outside: names that carry the marker, an extension of its own, and bulk (counted bytes would show it).
  writeFileSync(path.join(outside.dir, `${outside.marker}.ts`), `const leak = "${outside.marker}";\n`);
  writeFileSync(path.join(outside.dir, `big.${outside.marker}`), `${outside.marker}\n`.repeat(20_000));
  const inside: Record<string, string> = {
    "d/credentials": "inside\n",
    "d/x.txt": "inside x\n",
    "d/inside-only.txt": "inside only\n",
    "d/a.ts": "const inside = 1;\n",
    "d/sub/b.ts": "const deeper = 2;\n",
    "top.ts": "const top = 3;\n",
  };
  for (const [rel, text] of Object.entries(inside)) {
    fx.write(rel, text);
    insideBytes += Buffer.byteLength(text);
    if (rel.startsWith("d/")) dBytes += Buffer.byteLength(text);
  }
  const host = await fx.host({ envelope: "auto_edit" });
  const start = expectOk(
    await host.call(
      "local_shell",
      { command: "node", args: ["-e", swapper(outside.dir)], background: true },
      { session: "attacker" },
    ),
  ).result;
  assert.equal(start.contained, true, "the racer runs in the sandbox");
  racer = { host, id: String(start.id) };
  const stdout = async () =>
    String(
      (
        expectOk(await host.call("process_output", { id: racer.id }, { session: "attacker" })).result.stdout as {
          text: string;
        }
      ).text,
    );
  assert.ok(await waitFor(async () => (await stdout()).includes("ready")), await stdout());
  for (const engine of ["rg", "js"])
    hosts.set(engine, await fx.host({ envelope: "auto_edit", env: { ...fxEnv(), LATCH_GREP_ENGINE: engine } }));
});

after(async () => {
  if (racer) expectOk(await racer.host.call("process_kill", { id: racer.id }, { session: "attacker" }));
  assert.deepEqual(markedProcesses(), [], "the racer is gone");
  fx?.cleanup();
});

function fxEnv(): Record<string, string> {
  return { PATH: SYSTEM_PATH.join(":"), HOME: fx.home };
}

/** Whether a result shows d's own files (`inside-only.txt` by name, "inside" as content). */
const showsD = (r: CallResult) => r.status === "ok" && JSON.stringify(r.result).includes("inside");

/**
 * Run `step` for RACE_MS against the racer, then check: no result holds the marker (no outside byte,
 * no outside-only name), the outside tree is as it was, and the race reached the walk (some result
 * missed d's own files: `d` was a link or gone as it was walked).
 */
async function race(
  t: TestContext,
  step: (call: (engine: string, tool: string, args: object, counts?: boolean) => Promise<CallResult>) => Promise<void>,
  check: (r: CallResult) => void = () => undefined,
  sawD: (r: CallResult) => boolean = showsD,
): Promise<void> {
  const before = snapshot(outside.dir);
  const tally = new Tally();
  let missed = 0;
  // `counts`: whether the call would show d's files when d is there (a grep for the outside marker never does).
  const call = async (engine: string, tool: string, args: object, counts = true) => {
    const r = tally.add(await hosts.get(engine)!.call(tool, args));
    if (counts && !sawD(r)) missed++;
    check(r);
    return r;
  };
  const steps = await forMs(
    RACE_MS,
    () => step(call),
    () => missed > 0 && tally.ok > 0,
  );
  t.diagnostic(`${steps} steps, ${tally.results.length} calls, ${missed} raced (d was not there):\n${tally.summary()}`);
  tally.assertNoMarker(outside.marker);
  assert.deepEqual(snapshot(outside.dir), before, "nothing changed outside");
  for (const r of tally.results)
    if (r.status === "error")
      assert.ok(["ENOENT", "ENOTDIR"].includes(r.code), `a folder gone mid-walk is said as such: ${JSON.stringify(r)}`);
  assert.ok(missed > 0, "the race reached the walks (some saw d gone or refused)");
  assert.ok(tally.ok > 0, "the walks still work while the racer runs");
}

describe("race: walks while a contained process swaps a folder for a link to outside", () => {
  test("list_dir never lists an outside name (the root recursively, and d itself)", async (t) => {
    await race(t, async (call) => {
      await call("js", "list_dir", { path: ".", recursive: true });
      await call("js", "list_dir", { path: "d" });
    });
  });

  test("find_files never names an outside file (its walk, under LATCH_GREP_ENGINE=rg or js)", async (t) => {
    await race(t, async (call) => {
      await call("rg", "find_files", { pattern: "**/*" });
      await call("js", "find_files", { pattern: "**/*" });
    });
  });

  test("grep never shows an outside line or name, with ripgrep or the JS engine", async (t) => {
    await race(t, async (call) => {
      for (const engine of ["rg", "js"]) {
        await call(engine, "grep", { pattern: "inside" });
        await call(engine, "grep", { pattern: "OUTSIDE" }, false);
        await call(engine, "grep", { pattern: "inside|OUTSIDE|const", regex: true, path: "d" });
      }
    });
  });

  test("count_stats never counts an outside file", async (t) => {
    await race(
      t,
      async (call) => {
        await call("js", "count_stats", { path: "." });
        await call("js", "count_stats", { path: "d" });
      },
      // count_stats names no file: what it read shows in its totals and extensions.
      (r) => {
        if (r.status !== "ok") return;
        const res = r.result as { bytes: number; by_extension: Record<string, unknown> };
        assert.ok(res.bytes <= insideBytes, `counted bytes from outside: ${JSON.stringify(res)}`);
        assert.ok(!Object.keys(res.by_extension).some((e) => e.includes("OUTSIDE")), JSON.stringify(res));
      },
      // Whole: the tree's bytes, or d's alone.
      (r) => r.status === "ok" && [insideBytes, dBytes].includes((r.result as { bytes: number }).bytes),
    );
  });

  test("ast_search never matches in an outside file", async (t) => {
    await race(t, async (call) => {
      await call("js", "ast_search", { pattern: "const $X = $Y", lang: "typescript" });
      await call("js", "ast_search", { pattern: "const $X = $Y", lang: "typescript", path: "d" });
    });
  });
});
