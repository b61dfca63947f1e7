// State faults are errors: every state-dir and database fault gives `latch call` the documented JSON
// error (exit 1) naming the path and the fix, never a stack trace, and writes nothing; over MCP a
// state dir deleted under the running server turns every call into an isError result until it is back.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { after, describe, test } from "node:test";
import { Ledger } from "../../src/fs/ledger.js";
import { cutLongInputs } from "../../src/host/short.js";
import { runCli, type CliRun } from "../helpers/cli.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { stdioClient } from "../helpers/mcp.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { NOBODY, unprivileged } from "../helpers/unprivileged.js";

/** `latch call write_file` of a new file, as root or as nobody (permissions mean nothing to root). */
function writeCall(fx: Fixture, state: string, asNobody = false): Promise<CliRun> {
  const args = ["call", "write_file", JSON.stringify({ path: "new.txt", content: "x\n" })];
  args.push("--root", fx.root, "--state-dir", state);
  const env = { PATH: process.env.PATH, HOME: fx.base };
  return asNobody ? unprivileged().runCli(args, env) : runCli(args, { env });
}

/** The documented error: JSON on stdout, exit 1, the path named, no stack trace, nothing written. */
function assertStateError(fx: Fixture, run: CliRun, code: string, names: string, says: RegExp): void {
  const all = run.stdout + run.stderr;
  assert.equal(run.code, 1, all);
  assert.equal(run.json?.status, "error", all);
  assert.equal(run.json.code, code, all);
  assert.ok(run.json.message.includes(names), `the message names ${names}: ${run.json.message}`);
  assert.match(run.json.message, says);
  assert.doesNotMatch(all, /\n\s+at .+:\d+:\d+/, "no stack trace");
  assert.equal(existsSync(path.join(fx.root, "new.txt")), false, "nothing was written");
}

/** A workspace and a state dir that one good call has set up (latch.db, locks/, logs/). */
async function prepared(tmp?: string): Promise<Fixture> {
  const fx = makeFixture("latch-test-", tmp);
  fx.write({ "a.txt": "keep\n" });
  const ok = await runCli(["call", "read_file", '{"path":"a.txt"}', "--root", fx.root, "--state-dir", fx.state]);
  assert.equal(ok.json?.status, "ok", ok.stdout + ok.stderr);
  return fx;
}

function dropDb(state: string): void {
  for (const f of ["latch.db", "latch.db-wal", "latch.db-shm"]) rmSync(path.join(state, f), { force: true });
}

describe("state faults at startup give the JSON error with the path and the fix", () => {
  const made: Fixture[] = [];
  after(() => made.forEach((f) => f.cleanup()));
  const fixture = async (tmp?: string) => {
    const fx = await prepared(tmp);
    made.push(fx);
    return fx;
  };

  test("a garbage latch.db", async () => {
    const fx = await fixture();
    dropDb(fx.state);
    writeFileSync(path.join(fx.state, "latch.db"), randomBytes(16384));
    const db = path.join(fx.state, "latch.db");
    assertStateError(fx, await writeCall(fx, fx.state), "ESTATE", db, /not a valid database.*Move it/);
  });

  test("a truncated latch.db", async () => {
    const fx = await fixture();
    const db = path.join(fx.state, "latch.db");
    const l = new Ledger(db);
    for (let i = 0; i < 4000; i++) l.record(`s${i}`, `/w/${i}`.padEnd(200, "x"), "h".repeat(64), "full");
    l.close();
    assert.equal(existsSync(db + "-wal"), false, "checkpointed on close");
    truncateSync(db, Math.floor(statSync(db).size / 2));
    assertStateError(fx, await writeCall(fx, fx.state), "ESTATE", db, /not a valid database.*Move it/);
  });

  test("a folder in place of latch.db", async () => {
    const fx = await fixture();
    dropDb(fx.state);
    mkdirSync(path.join(fx.state, "latch.db"));
    assertStateError(fx, await writeCall(fx, fx.state), "ESTATE", path.join(fx.state, "latch.db"), /is a folder/);
  });

  test("`locks` as a file", async () => {
    const fx = await fixture();
    rmSync(path.join(fx.state, "locks"), { recursive: true });
    writeFileSync(path.join(fx.state, "locks"), "");
    const locks = path.join(fx.state, "locks");
    assertStateError(fx, await writeCall(fx, fx.state), "ESTATE", locks, /a file stands where latch keeps a folder/);
  });

  test("a dangling state-dir symlink", async () => {
    const fx = await fixture();
    const link = path.join(fx.base, "state-link");
    symlinkSync(path.join(fx.base, "missing"), link);
    assertStateError(fx, await writeCall(fx, link), "ESTATE", path.join(fx.base, "missing"), /does not exist/);
    assert.equal(existsSync(path.join(fx.base, "missing")), false, "nothing made behind the link");
  });

  describe("permissions (run as nobody: root ignores them)", () => {
    // nobody must reach the fixture too: it goes in the helper's folder, not under a private TMPDIR.
    const asNobody = async () => {
      const fx = await fixture(unprivileged().tmp);
      chmodSync(fx.base, 0o755);
      execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, fx.root, fx.state]);
      return fx;
    };
    test("latch.db with mode 0000", async () => {
      const fx = await asNobody();
      chmodSync(path.join(fx.state, "latch.db"), 0o000);
      const run = await writeCall(fx, fx.state, true);
      assertStateError(fx, run, "ESTATE", fx.state, /Check that|writable/);
    });
    test("latch.db with mode 0444", async () => {
      const fx = await asNobody();
      chmodSync(path.join(fx.state, "latch.db"), 0o444);
      const run = await writeCall(fx, fx.state, true);
      assertStateError(fx, run, "ESTATE", fx.state, /read-only|writable/);
    });
    test("the state dir with mode 0444", async () => {
      const fx = await asNobody();
      chmodSync(fx.state, 0o444);
      const run = await writeCall(fx, fx.state, true);
      assertStateError(fx, run, "ESTATE", fx.state, /not writable.*chmod/);
    });
    test("the state dir with mode 0000", async () => {
      const fx = await asNobody();
      chmodSync(fx.state, 0o000);
      const run = await writeCall(fx, fx.state, true);
      assertStateError(fx, run, "ESTATE", fx.state, /not writable.*chmod/);
    });
  });

  describe("a state dir on its own disk (a real tmpfs)", () => {
    const mountState = async () => {
      const fx = await fixture();
      const mnt = path.join(fx.base, "statefs");
      after(mountTmpfs(mnt, "size=1m"));
      const ok = await runCli(["call", "read_file", '{"path":"a.txt"}', "--root", fx.root, "--state-dir", mnt]);
      assert.equal(ok.json?.status, "ok", ok.stdout + ok.stderr);
      return { fx, mnt };
    };
    test("read-only", async () => {
      const { fx, mnt } = await mountState();
      execFileSync("mount", ["-o", "remount,ro", mnt]);
      assertStateError(fx, await writeCall(fx, mnt), "ESTATE", mnt, /EROFS.*not writable/);
    });
    test("a HOME on a read-only disk: the default state dir cannot be made, and the error says EROFS", async () => {
      const fx = await fixture();
      const home = path.join(fx.base, "home");
      after(mountTmpfs(home, "ro,size=64k"));
      const state = path.join(home, ".local", "state", "latch");
      const env = { HOME: home, LATCH_STATE_DIR: undefined, XDG_STATE_HOME: undefined };
      const run = await runCli(["call", "write_file", '{"path":"new.txt","content":"x\\n"}', "--root", fx.root], {
        env,
      });
      assertStateError(fx, run, "ESTATE", state, /EROFS.*another --state-dir/);
    });
    test("full: ENOSPC names the state dir", async () => {
      const { fx, mnt } = await mountState();
      try {
        for (;;) appendFileSync(path.join(mnt, "filler"), Buffer.alloc(4096, 1));
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, "ENOSPC");
      }
      const run = await writeCall(fx, mnt);
      assertStateError(fx, run, "ENOSPC", `state dir \`${mnt}\` is full`, /Free space/);
    });
  });
});

describe("a state dir deleted under a running MCP server", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("every call is an isError result naming it until it is back; nothing is written", async () => {
    fx.write({ "a.txt": "keep\n" });
    const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--yes"]);
    type Out = { isError?: boolean; content: { text: string }[] };
    const call = async (name: string, args: object) =>
      (await client.callTool({ name, arguments: args as Record<string, unknown> })) as Out;
    try {
      assert.equal((await call("read_file", { path: "a.txt" })).isError, undefined);
      const away = fx.state + ".away";
      renameSync(fx.state, away);
      for (const [name, args] of [
        ["write_file", { path: "a.txt", content: "lost\n" }],
        ["read_file", { path: "a.txt", force: true }],
      ] as const) {
        const out = await call(name, args);
        assert.equal(out.isError, true, JSON.stringify(out));
        // Cut as short.ts cuts a path past 300 characters (a deep clone's TMPDIR): the run is the same.
        const named = cutLongInputs(`state dir \`${fx.state}\` was deleted`);
        assert.ok(out.content[0].text.includes(named), out.content[0].text);
        assert.match(out.content[0].text, /nothing ran, and nothing is logged until it is back/);
      }
      assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "keep\n");
      assert.equal(existsSync(fx.state), false, "latch did not make it again behind the operator's back");
      renameSync(away, fx.state);
      const back = await call("write_file", { path: "a.txt", content: "new\n" });
      assert.equal(back.isError, undefined, JSON.stringify(back));
      assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "new\n");
      rmSync(fx.state, { recursive: true });
      mkdirSync(fx.state);
      const replaced = await call("write_file", { path: "a.txt", content: "lost\n" });
      assert.equal(replaced.isError, true);
      assert.match(replaced.content[0].text, /was replaced since latch started.*Restart latch/);
      assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "new\n");
    } finally {
      await client.close();
    }
  });
});
