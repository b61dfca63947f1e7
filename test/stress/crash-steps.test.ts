// One truthful state after any crash (issue 27): move_file, apply_patch and edit_file with several
// edits, each cut at every step of its write by SIGKILL (just before or just after the syscall) or
// failed there with EIO, through a fault shim preloaded into a real `latch call` process
// (test/helpers/fault-shim.ts). The next `latch call` of the same ledger session is the restart. The
// calls around those two (the reads before the cut, the session's next edit after the restart) go
// through the library in this process, a host opened on the same state and closed for each, as a
// `latch call` does: the same ledger and journal without a CLI start each (~0.3 s of CPU). After it: every file is at exactly one path with one link, no empty folder and no temp file is left, the
// session's retry of the same call lands exactly once (or is refused with a true reason), and its
// next edit is accepted: never "changed by another call or process" for its own interrupted write.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import { createHost } from "../../src/host/create-host.js";
import { CLI } from "../helpers/cli.js";
import { buildFaultShim } from "../helpers/fault-shim.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

const base = makeFixture("latch-crash-");
after(() => base.cleanup());
const shim = buildFaultShim();
after(() => shim.cleanup());
const SHIM = shim.lib;

interface Run {
  signal: NodeJS.Signals | null;
  json: any;
  out: string;
}

/** One `latch call` as session `s`: a new process each time, so each call after a kill is a restart. */
function call(fx: Fixture, tool: string, args: unknown, fault?: string): Run {
  const r = spawnSync(
    process.execPath,
    [CLI, "call", tool, JSON.stringify(args), "--root", fx.root, "--state-dir", fx.state, "--session", "s", "--yes"],
    {
      encoding: "utf8",
      env: { ...process.env, ...(fault ? { LD_PRELOAD: SHIM, LATCH_FAULT: fault } : {}) },
    },
  );
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined; // killed before it printed
  }
  return { signal: r.signal, json, out: r.stdout + r.stderr };
}

/** The same call as `call` without its fault, through a host of its own in this process (opened, called, closed). */
async function lib(fx: Fixture, tool: string, args: unknown): Promise<Run> {
  const host = await createHost({ root: fx.root, stateDir: fx.state });
  try {
    const json: any = await host.call(tool, args, { session: "s", approver: yesApprover });
    return { signal: null, json, out: JSON.stringify(json) };
  } finally {
    host.close();
  }
}

function ok(r: Run, what: string): any {
  assert.equal(r.json?.status, "ok", `${what}: ${r.out}`);
  return r.json.result;
}

/** Every entry under the root: files with their content (each must have one link), and any folder left empty. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    const names = readdirSync(path.join(root, rel));
    if (rel !== "" && names.length === 0) out[`${rel}/`] = "(empty folder)";
    for (const n of names) {
      const r = rel ? `${rel}/${n}` : n;
      const st = lstatSync(path.join(root, r));
      if (st.isDirectory()) walk(r);
      else {
        assert.equal(st.nlink, 1, `${r} has ${st.nlink} links`);
        out[r] = readFileSync(path.join(root, r), "utf8");
      }
    }
  };
  walk("");
  return out;
}

/** The tree without the temp files a killed removal left (`.rm.latch-PID-….tmp`). */
function withoutDeadTemps(t: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(t).filter(([p]) => !/(^|\/)\.rm\.latch-\d+-[0-9a-f]{12}\.tmp$/.test(p)));
}

/** The faulted call: killed (KILL, KILLAFTER) or answered with an error naming what exists (EIO). */
function faulted(fx: Fixture, tool: string, args: unknown, fault: string): Run {
  const r = call(fx, tool, args, fault);
  if (/:KILL(AFTER)?$/.test(fault)) assert.equal(r.signal, "SIGKILL", `${fault}: the shim killed it: ${r.out}`);
  else {
    assert.equal(r.json?.status, "error", `${fault}: ${r.out}`);
    assert.equal(r.json.code, "EIO", r.out);
    assert.doesNotMatch(r.json.message, /^EIO: i\/o error/, "not a bare errno");
  }
  return r;
}

describe("move_file cut at each step", () => {
  const MOVE = { from: "a.txt", to: "new/b.txt" };
  const cases: { fault: string; moved: boolean; says?: RegExp }[] = [
    { fault: "mkdir:new:1:KILL", moved: false },
    { fault: "mkdir:new:1:KILLAFTER", moved: false },
    {
      fault: "mkdir:new:1:EIO",
      moved: false,
      says: /A folder for `new\/b.txt` could not be made \(EIO\); nothing was changed/,
    },
    { fault: "link:b.txt:1:KILL", moved: false },
    { fault: "link:b.txt:1:KILLAFTER", moved: true },
    {
      fault: "link:b.txt:1:EIO",
      moved: false,
      says: /`new\/b.txt` could not be made \(EIO\); nothing was moved: the file is still at `a.txt`/,
    },
    // The old name goes by a rename aside to a temp name in the state dir's trash, judged there, then
    // unlinked (removeIfStill); what a kill leaves there, the next start sweeps.
    { fault: "rename:.rm.latch-*:1:KILL", moved: true },
    { fault: "rename:.rm.latch-*:1:KILLAFTER", moved: true },
    { fault: "unlink:.rm.latch-*:1:KILL", moved: true },
    {
      fault: "rename:.rm.latch-*:1:EIO",
      moved: false,
      says: /`a.txt` could not be removed from its folder \(EIO\), so the move was undone: nothing was moved/,
    },
    {
      fault: "rename:.rm.latch-*:1:EIO,unlink:b.txt:1:EIO",
      moved: true,
      says: /stopped half way: the file is now at both paths .* latch removes `a.txt` before the next write call/,
    },
  ];
  for (const c of cases) {
    test(`${c.fault}: the file ends at one path with one link, no empty folder; retry and next edit are true`, async () => {
      const fx = makeFixture("latch-crash-move-", base.base);
      fx.write({ "a.txt": "hello\n" });
      ok(await lib(fx, "read_file", { path: "a.txt" }), "read");
      const r = faulted(fx, "move_file", MOVE, c.fault);
      if (c.says) assert.match(r.json.message, c.says);
      // The retry is the restart: the journal is recovered first, then the same move is judged.
      const retry = call(fx, "move_file", MOVE);
      if (c.moved) {
        assert.equal(retry.json?.status, "error", retry.out);
        assert.match(retry.json.message, /`a.txt` does not exist; nothing to move/);
      } else ok(retry, "the retry of a move that did not land");
      assert.deepEqual(tree(fx.root), { "new/b.txt": "hello\n" }, "moved exactly once");
      const edit = await lib(fx, "edit_file", { path: "new/b.txt", old_string: "hello", new_string: "HELLO" });
      ok(edit, "the session's next edit");
      assert.deepEqual(tree(fx.root), { "new/b.txt": "HELLO\n" });
    });
  }
});

describe("apply_patch cut at each step", () => {
  const PATCH = [
    "*** Begin Patch",
    "*** Update File: x.txt",
    "@@",
    "-x1",
    "+x2",
    "*** Add File: new/y.txt",
    "+y",
    "*** Delete File: z.txt",
    "*** End Patch",
  ].join("\n");
  const BEFORE = { "x.txt": "x1\n", "z.txt": "z1\n" };
  const AFTER = { "x.txt": "x2\n", "new/y.txt": "y\n" };
  // How many of the patch's three changes (x.txt, new/y.txt, z.txt's removal) landed before the cut.
  const cases: { fault: string; landed: 0 | 1 | 2 | 3; says?: RegExp }[] = [
    { fault: "mkdir:new:1:KILL", landed: 0 },
    { fault: "mkdir:new:1:KILLAFTER", landed: 0 },
    {
      fault: "mkdir:new:1:EIO",
      landed: 0,
      says: /A folder for `new\/y.txt` could not be made \(EIO\); nothing was changed/,
    },
    { fault: "rename:x.txt:1:KILL", landed: 0 },
    { fault: "rename:x.txt:1:KILLAFTER", landed: 1 },
    {
      fault: "rename:x.txt:1:EIO",
      landed: 0,
      says: /`x.txt` could not be written \(EIO\); every file changed before it was put back, so nothing was changed/,
    },
    // A new file is linked in from its temp file (never over a file made meanwhile), not renamed.
    { fault: "link:y.txt:1:KILL", landed: 1 },
    { fault: "link:y.txt:1:KILLAFTER", landed: 2 },
    {
      fault: "link:y.txt:1:EIO",
      landed: 0,
      says: /`new\/y.txt` could not be written \(EIO\); every file changed before it was put back/,
    },
    // A removal renames aside to a temp name first (removeIfStill): the cut before it keeps z.txt.
    { fault: "rename:.rm.latch-*:1:KILL", landed: 2 },
    { fault: "rename:.rm.latch-*:1:KILLAFTER", landed: 3 },
    { fault: "unlink:.rm.latch-*:1:KILL", landed: 3 },
    {
      fault: "rename:.rm.latch-*:1:EIO",
      landed: 0,
      says: /`z.txt` could not be written \(EIO\); every file changed before it was put back/,
    },
  ];
  for (const c of cases) {
    test(`${c.fault}: ${c.landed} of 3 changes landed, each file whole at one path, no empty folder; retry and next edit are true`, async () => {
      const fx = makeFixture("latch-crash-patch-", base.base);
      fx.write(BEFORE);
      for (const p of Object.keys(BEFORE)) ok(await lib(fx, "read_file", { path: p }), "read");
      const r = faulted(fx, "apply_patch", { patch: PATCH }, c.fault);
      if (c.says) assert.match(r.json.message, c.says);
      const retry = call(fx, "apply_patch", { patch: PATCH });
      if (c.landed === 0) ok(retry, "the retry of a patch that did not land");
      else
        assert.notEqual(retry.json?.status, "ok", `a patch that landed (in part) is not applied again: ${retry.out}`);
      const want: Record<string, string> =
        c.landed === 0
          ? { ...AFTER }
          : {
              "x.txt": "x2\n",
              ...(c.landed >= 2 ? { "new/y.txt": "y\n" } : {}),
              ...(c.landed < 3 ? { "z.txt": "z1\n" } : {}),
            };
      // Cut after z.txt was renamed aside (removeIfStill), it is at the dead writer's temp name until a
      // write into its folder sweeps it: the next edit's, below.
      assert.deepEqual(withoutDeadTemps(tree(fx.root)), want);
      ok(await lib(fx, "edit_file", { path: "x.txt", old_string: "x2", new_string: "X" }), "the session's next edit");
      assert.deepEqual(tree(fx.root), { ...want, "x.txt": "X\n" });
    });
  }
});

describe("edit_file with several edits cut at each step", () => {
  const EDITS = {
    path: "f.txt",
    edits: [
      { old_string: "one", new_string: "ONE" },
      { old_string: "two", new_string: "TWO" },
    ],
  };
  const cases: { fault: string; landed: boolean; says?: RegExp }[] = [
    { fault: "rename:f.txt:1:KILL", landed: false },
    { fault: "rename:f.txt:1:KILLAFTER", landed: true },
    {
      fault: "rename:f.txt:1:EIO",
      landed: false,
      says: /Writing `f.txt` failed \(EIO\); nothing was changed: `f.txt` still holds its old content/,
    },
  ];
  for (const c of cases) {
    test(`${c.fault}: the file is whole, the retry lands once, the next edit is not told its own write changed the file`, async () => {
      const fx = makeFixture("latch-crash-edit-", base.base);
      fx.write({ "f.txt": "one\ntwo\n" });
      ok(await lib(fx, "read_file", { path: "f.txt" }), "read");
      const r = faulted(fx, "edit_file", EDITS, c.fault);
      if (c.says) assert.match(r.json.message, c.says);
      const retry = call(fx, "edit_file", EDITS);
      if (c.landed) {
        assert.equal(retry.json?.status, "error", retry.out);
        assert.match(retry.json.message, /Edit 1 of 2: old_string was not found/);
      } else ok(retry, "the retry of edits that did not land");
      assert.deepEqual(tree(fx.root), { "f.txt": "ONE\nTWO\n" }, "applied exactly once, no temp file left");
      const next = await lib(fx, "edit_file", { path: "f.txt", old_string: "TWO", new_string: "2" });
      assert.doesNotMatch(next.out, /changed since you read it/);
      ok(next, "the session's next edit");
      assert.deepEqual(tree(fx.root), { "f.txt": "ONE\n2\n" });
    });
  }
});
