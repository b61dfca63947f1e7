// The per-session memory budget over HTTP (issue 27): one session that fills it with input its
// processes never read is refused with the amount held and the budget, nothing more is queued, and
// another session of the same server is served as before. `_session_memory_bytes` is set to 2 MiB
// here: with the default (16 MiB) eight processes with full buffers and queues hold only ~12.3 MiB.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, httpClient, startHttpServer, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());
const MIB = 1024 * 1024;
const config = path.join(fx.base, "agents.toml");
writeFileSync(config, `[tools_policies.local_shell]\n_session_memory_bytes = "${2 * MIB}"\n`);

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

/** The most text one process_input call takes. */
const PIECE = "x".repeat(64 * 1024);

/** A MiB to `id` in the largest pieces a call takes, each answered ok; what they took and left queued, summed. */
async function fill(c: Client, id: string): Promise<{ taken_bytes: number; queued_bytes: number }> {
  const sum = { taken_bytes: 0, queued_bytes: 0 };
  for (let i = 0; i < MIB / PIECE.length; i++) {
    const r = await call(c, "process_input", { id, text: PIECE, wait_ms: 0 });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    sum.taken_bytes += fieldsOf(r).taken_bytes as number;
    sum.queued_bytes += fieldsOf(r).queued_bytes as number;
  }
  return sum;
}

/** A background process that never reads its stdin: what is sent to it waits in latch. */
async function deaf(c: Client): Promise<string> {
  const r = await call(c, "local_shell", { command: "sleep 600", background: true });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  return fieldsOf(r).id;
}

test("one HTTP session spends its memory budget: a clear refusal, nothing queued; another session is served", async () => {
  const server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state, "--config", config]);
  const allow = () => true; // the person allows each shell call
  const a = await httpClient(server, allow);
  const b = await httpClient(server, allow);
  try {
    const [p1, p2, p3] = [await deaf(a), await deaf(a), await deaf(a)];
    // Each takes what its pipe holds (64 KiB here) and leaves the rest queued in latch.
    for (const id of [p1, p2]) {
      const r = await fill(a, id);
      assert.equal(r.taken_bytes + r.queued_bytes, MIB, JSON.stringify(r));
      assert.ok(r.queued_bytes > MIB / 2, JSON.stringify(r));
    }
    let held = fieldsOf(await call(a, "process_list", {})).held_bytes as number;
    assert.ok(held > MIB && held <= 2 * MIB, `held ${held}`);

    // The third process's input fits until it would pass the budget: then refused, saying what is
    // held and what the budget is.
    let over: ToolResult | undefined;
    for (let i = 0; i < 16 && !over; i++) {
      const r = await call(a, "process_input", { id: p3, text: PIECE, wait_ms: 0 });
      if (r.isError) over = r;
      else held = fieldsOf(await call(a, "process_list", {})).held_bytes as number;
    }
    assert.ok(over, "the budget was reached");
    const text = over.content[0]?.text ?? "";
    assert.match(
      text,
      new RegExp(
        `^Refused: This session's background processes already hold ${(held / MIB).toFixed(held % MIB === 0 ? 0 : 2)} MiB of output and input; ${PIECE.length} more bytes would pass latch's budget per session \\(2 MiB\\), so nothing was sent\\.\nHint: Stop a process with process_kill`,
      ),
    );
    const listed = fieldsOf(await call(a, "process_list", {}));
    assert.equal(listed.held_bytes, held, "the refused text was not queued");

    // Another session on the same server: its own budget, served at once.
    const q = await deaf(b);
    const mine = await fill(b, q);
    assert.equal(mine.taken_bytes + mine.queued_bytes, MIB, JSON.stringify(mine));
    const echo = await call(b, "local_shell", { command: "echo served" });
    assert.match(fieldsOf(echo).stdout, /^served\n$/);

    // Stopping a process gives the session its room back: the same input is taken.
    assert.notEqual((await call(a, "process_kill", { id: p1 })).isError, true);
    const again = fieldsOf(await call(a, "process_input", { id: p3, text: PIECE, wait_ms: 0 }));
    assert.equal(again.taken_bytes + again.queued_bytes, PIECE.length, JSON.stringify(again));
  } finally {
    await a.close();
    await b.close();
    await server.stop();
  }
});
