// 50 concurrent HTTP sessions, each read → edit → read on its own file and on one shared file.
// No session's read authorizes another's write; stale writes are refused; nothing is lost.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import {
  fieldsOf,
  httpClient,
  modelView,
  startHttpServer,
  type HttpServerProc,
  type ToolResult,
} from "../helpers/mcp.js";

const SESSIONS = 50;
let fx: Fixture;
let server: HttpServerProc;
before(async () => {
  fx = makeFixture();
  const files: Record<string, string> = { "shared.txt": "END\n" };
  for (let i = 0; i < SESSIONS; i++) files[`own-${i}.txt`] = `session ${i}: v0\n`;
  fx.write(files);
  server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state]);
});
after(async () => {
  await server.stop();
  fx.cleanup();
});

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

test("50 concurrent sessions: own files, a shared file, no borrowed reads, no lost updates", async () => {
  const clients = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(server)));
  let staleRefusals = 0;
  await Promise.all(
    clients.map(async (c, i) => {
      // Own file: read, edit, read back.
      assert.equal((await call(c, "read_file", { path: `own-${i}.txt` })).isError, undefined);
      const e = await call(c, "edit_file", { path: `own-${i}.txt`, old_string: "v0", new_string: "v1" });
      assert.equal(e.isError, undefined, JSON.stringify(e));
      const back = await call(c, "read_file", { path: `own-${i}.txt`, force: true });
      assert.equal(fieldsOf(back).content, `session ${i}: v1\n`);

      // A neighbour's file, read by the neighbour's session but not by this one: refused.
      const j = (i + 1) % SESSIONS;
      const borrowed = await call(c, "edit_file", {
        path: `own-${j}.txt`,
        old_string: `session ${j}`,
        new_string: "stolen",
      });
      assert.equal(borrowed.isError, true, `session ${i} edited own-${j}.txt without reading it`);
      assert.match(modelView(borrowed), /^Refused: /);

      // The shared file: read, edit; when stale, read again and retry until it lands.
      for (let attempt = 0; ; attempt++) {
        assert.ok(attempt < 200, `session ${i} never landed its edit`);
        assert.equal((await call(c, "read_file", { path: "shared.txt", force: true })).isError, undefined);
        const s = await call(c, "edit_file", {
          path: "shared.txt",
          old_string: "END\n",
          new_string: `line from session ${i}\nEND\n`,
        });
        if (!s.isError) break;
        assert.match(modelView(s), /changed since you read it/, JSON.stringify(s));
        staleRefusals++;
      }
    }),
  );
  await Promise.all(clients.map((c) => c.close()));

  for (let i = 0; i < SESSIONS; i++)
    assert.equal(readFileSync(path.join(fx.root, `own-${i}.txt`), "utf8"), `session ${i}: v1\n`);
  const shared = readFileSync(path.join(fx.root, "shared.txt"), "utf8").split("\n").filter(Boolean);
  assert.equal(shared.pop(), "END");
  assert.deepEqual([...shared].sort(), Array.from({ length: SESSIONS }, (_, i) => `line from session ${i}`).sort());
  console.log(`# ${staleRefusals} stale edits refused and retried`);
});
