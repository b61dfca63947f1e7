// The client shape end to end: an ACP editor (the SDK's client side, with in-memory buffers and real
// processes behind its terminals) and the latch-backed example agent, over a real ndjson stdio stream.
// Every check looks at the buffers, the disk, the terminals and the policy log.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { startEditor, type Editor } from "./acp-editor.js";

const ALL = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

function agentEnv(fx: Fixture, envelope = "auto_edit"): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_STATE_DIR: fx.state, LATCH_ENVELOPE: envelope };
}

/** The outcomes the policy log recorded, in order. */
function loggedOutcomes(fx: Fixture): string[] {
  const dir = path.join(fx.state, "logs");
  return readdirSync(dir)
    .flatMap((f) => readFileSync(path.join(dir, f), "utf8").split("\n"))
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { record: { type: string; status?: string } }).record)
    .filter((r) => r.type === "effect_outcome")
    .map((r) => String(r.status));
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the client shape over ACP, under auto_edit", () => {
  const fx = makeFixture("latch-acp-");
  let ed: Editor;
  let sid: string;
  const abs = (rel: string) => path.join(fx.root, rel);
  before(async () => {
    fx.write({ "a.txt": "on disk\n", "notes.txt": "disk notes\n" });
    ed = await startEditor({ env: agentEnv(fx), capabilities: ALL });
    sid = await ed.newSession(fx.root);
  });
  after(async () => {
    await ed.close();
    fx.cleanup();
  });

  test("a read returns the editor's unsaved buffer, not the disk", async () => {
    ed.buffers.set(abs("a.txt"), "unsaved buffer\n");
    const { results } = await ed.prompt(sid, [{ tool: "read_file", args: { path: "a.txt" } }]);
    assert.equal(results[0].status, "ok", JSON.stringify(results[0]));
    assert.equal((results[0].result as { content: string }).content, "unsaved buffer\n");
  });

  test("an edit changes the buffer, not the disk", async () => {
    const { results } = await ed.prompt(sid, [
      { tool: "edit_file", args: { path: "a.txt", old_string: "unsaved", new_string: "edited" } },
    ]);
    assert.equal(results[0].status, "ok", JSON.stringify(results[0]));
    assert.equal(ed.buffers.get(abs("a.txt")), "edited buffer\n");
    assert.equal(readFileSync(abs("a.txt"), "utf8"), "on disk\n");
  });

  test("read-before-write holds across the client: unread and changed-in-the-editor buffers are refused", async () => {
    ed.buffers.set(abs("notes.txt"), "buffer notes\n");
    const unread = await ed.prompt(sid, [{ tool: "write_file", args: { path: "notes.txt", content: "mine\n" } }]);
    assert.equal(unread.results[0].status, "refused", JSON.stringify(unread.results[0]));
    assert.match(String(unread.results[0].reason), /not read it/);
    assert.equal(ed.buffers.get(abs("notes.txt")), "buffer notes\n");

    await ed.prompt(sid, [{ tool: "read_file", args: { path: "notes.txt" } }]);
    ed.buffers.set(abs("notes.txt"), "the person typed here\n"); // the editor changes it after the read
    const stale = await ed.prompt(sid, [{ tool: "write_file", args: { path: "notes.txt", content: "mine\n" } }]);
    assert.equal(stale.results[0].status, "refused", JSON.stringify(stale.results[0]));
    assert.match(String(stale.results[0].reason), /changed since you read it/);
    assert.equal(ed.buffers.get(abs("notes.txt")), "the person typed here\n");
  });

  test("a client error on fs/write_text_file is reported, and nothing is recorded as written", async () => {
    ed.buffers.set(abs("ro.txt"), "one\n");
    await ed.prompt(sid, [{ tool: "read_file", args: { path: "ro.txt" } }]);
    ed.failWrites.add(abs("ro.txt"));
    const edit = { tool: "edit_file", args: { path: "ro.txt", old_string: "one", new_string: "two" } };
    const failed = await ed.prompt(sid, [edit]);
    assert.equal(failed.results[0].status, "error", JSON.stringify(failed.results[0]));
    assert.equal(failed.results[0].code, "ECLIENT");
    assert.equal(ed.buffers.get(abs("ro.txt")), "one\n");
    assert.equal(loggedOutcomes(fx).at(-1), "error");
    // The session's read still stands for the old content, so the same edit goes through once the editor allows it.
    ed.failWrites.delete(abs("ro.txt"));
    const retried = await ed.prompt(sid, [edit]);
    assert.equal(retried.results[0].status, "ok", JSON.stringify(retried.results[0]));
    assert.equal(ed.buffers.get(abs("ro.txt")), "two\n");
  });

  test("a shell call runs in the editor's terminal, which is released", async () => {
    writeFileSync(abs("listed.txt"), "x");
    const before = ed.terminals.length;
    const { results } = await ed.prompt(sid, [{ tool: "local_shell", args: { command: "ls" } }]);
    assert.equal(results[0].status, "ok", JSON.stringify(results[0]));
    const r = results[0].result as { exit_code: number; stdout: string; contained: boolean };
    assert.equal(r.exit_code, 0);
    assert.match(r.stdout, /listed\.txt/);
    assert.equal(r.contained, false);
    assert.equal(ed.terminals.length, before + 1);
    assert.ok(ed.terminals.every((t) => t.released));
  });

  test("a shell call past its timeout is killed through terminal/kill and released", async () => {
    ed.answers.push("allow"); // sleep is not in the read-only tier: the editor is asked
    const before = ed.terminals.length;
    const { results } = await ed.prompt(sid, [{ tool: "local_shell", args: { command: "sleep 30", timeout_ms: 300 } }]);
    assert.equal(results[0].status, "ok", JSON.stringify(results[0]));
    assert.equal((results[0].result as { timed_out: boolean }).timed_out, true);
    const t = ed.terminals[before];
    assert.ok(t.killed && t.released);
    await t.exit;
    assert.equal(alive(t.child.pid), false);
  });

  test("session/cancel cancels a running shell call: the terminal is killed and released", async () => {
    ed.answers.push("allow");
    const before = ed.terminals.length;
    const running = ed.prompt(sid, [{ tool: "local_shell", args: { command: "sleep 30" } }]);
    while (ed.terminals.length === before) await new Promise((r) => setTimeout(r, 20));
    await ed.conn.agent.notify("session/cancel", { sessionId: sid });
    const { stopReason, results } = await running;
    assert.equal(stopReason, "cancelled");
    assert.equal((results[0].result as { cancelled: boolean }).cancelled, true, JSON.stringify(results[0]));
    const t = ed.terminals[before];
    assert.ok(t.killed && t.released);
    await t.exit;
    assert.equal(alive(t.child.pid), false);
  });
});

describe("approvals through session/request_permission, under the default envelope", () => {
  const fx = makeFixture("latch-acp-approve-");
  let ed: Editor;
  let sid: string;
  const abs = (rel: string) => path.join(fx.root, rel);
  before(async () => {
    ed = await startEditor({ env: agentEnv(fx, "default"), capabilities: ALL });
    sid = await ed.newSession(fx.root);
    ed.buffers.set(abs("f.txt"), "alpha\n");
    await ed.prompt(sid, [{ tool: "read_file", args: { path: "f.txt" } }]);
  });
  after(async () => {
    await ed.close();
    fx.cleanup();
  });
  const edit = (from: string, to: string) => ({
    tool: "edit_file",
    args: { path: "f.txt", old_string: from, new_string: to },
  });

  test("the request carries the exact change as ACP diff content; allow writes it", async () => {
    ed.answers.push("allow");
    const { results } = await ed.prompt(sid, [edit("alpha", "beta")]);
    assert.equal(results[0].status, "ok", JSON.stringify(results[0]));
    const asked = ed.permissions.at(-1)!;
    assert.deepEqual(asked.toolCall.content, [
      { type: "diff", path: abs("f.txt"), oldText: "alpha\n", newText: "beta\n" },
    ]);
    assert.deepEqual(
      asked.options.map((o) => o.kind),
      ["allow_once", "reject_once"],
    );
    assert.equal(ed.buffers.get(abs("f.txt")), "beta\n");
  });

  test("reject refuses the call and leaves the buffer as it was", async () => {
    ed.answers.push("reject");
    const { results } = await ed.prompt(sid, [edit("beta", "gamma")]);
    assert.equal(results[0].status, "refused", JSON.stringify(results[0]));
    assert.match(String(results[0].reason), /rejected/);
    assert.equal(ed.buffers.get(abs("f.txt")), "beta\n");
  });

  test("a cancelled request refuses the call and says nobody answered", async () => {
    ed.answers.push("cancel");
    const { results } = await ed.prompt(sid, [edit("beta", "delta")]);
    assert.equal(results[0].status, "refused", JSON.stringify(results[0]));
    assert.match(String(results[0].reason), /cancelled before anyone answered/);
    assert.equal(ed.buffers.get(abs("f.txt")), "beta\n");
  });

  test("a buffer changed while the request is open is refused as stale; nothing is written; the next try asks again", async () => {
    ed.answers.push(() => {
      ed.buffers.set(abs("f.txt"), "beta\ntyped meanwhile\n"); // the person types while the request is shown
      return "allow";
    });
    const stale = await ed.prompt(sid, [edit("beta", "omega")]);
    assert.equal(stale.results[0].status, "refused", JSON.stringify(stale.results[0]));
    assert.match(String(stale.results[0].reason), /changed since you read it|stale/);
    assert.equal(ed.buffers.get(abs("f.txt")), "beta\ntyped meanwhile\n", "what the person typed is kept");
    // After a fresh read, the next try asks again, with the diff of what is there now.
    await ed.prompt(sid, [{ tool: "read_file", args: { path: "f.txt" } }]);
    ed.answers.push("allow");
    const again = await ed.prompt(sid, [edit("beta", "omega")]);
    assert.equal(again.results[0].status, "ok", JSON.stringify(again.results[0]));
    assert.deepEqual(ed.permissions.at(-1)!.toolCall.content, [
      { type: "diff", path: abs("f.txt"), oldText: "beta\ntyped meanwhile\n", newText: "omega\ntyped meanwhile\n" },
    ]);
    assert.equal(ed.buffers.get(abs("f.txt")), "omega\ntyped meanwhile\n");
  });
});

describe("a client that announces no terminal and no writes", () => {
  const fx = makeFixture("latch-acp-caps-");
  let ed: Editor;
  let sid: string;
  before(async () => {
    ed = await startEditor({ env: agentEnv(fx), capabilities: { fs: { readTextFile: true } } });
    sid = await ed.newSession(fx.root);
  });
  after(async () => {
    await ed.close();
    fx.cleanup();
  });

  test("gets no local_shell and no write tools; reads and browse tools stay", async () => {
    const { results } = await ed.prompt(sid, [
      { tool: "local_shell", args: { command: "ls" } },
      { tool: "write_file", args: { path: "x.txt", content: "x" } },
      { tool: "list_dir", args: { path: "." } },
    ]);
    assert.equal(results[0].code, "EUNKNOWNTOOL", JSON.stringify(results[0]));
    assert.match(String(results[0].message), /not offered here/);
    assert.equal(results[1].code, "EUNKNOWNTOOL");
    assert.equal(results[2].status, "ok", JSON.stringify(results[2]));
    assert.equal(ed.terminals.length, 0);
  });
});
