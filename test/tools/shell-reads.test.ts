// Reads through the shell never count for read-before-write: only read_file and read_file_range do.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { expectOk, expectRefused } from "../helpers/expect.js";

test("cat through local_shell does not allow an edit", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write({ "seen.txt": "shown by cat\n" });
  const host = await fx.host();
  const cat = await host.call("local_shell", { command: "cat", args: ["seen.txt"] }, { session: "sh" });
  assert.equal(cat.status, "ok", JSON.stringify(cat));
  assert.equal(expectOk<{ stdout: string }>(cat).result.stdout, "shown by cat\n");
  const edit = await host.call(
    "edit_file",
    { path: "seen.txt", old_string: "cat", new_string: "dog" },
    { session: "sh" },
  );
  assert.match(expectRefused(edit).reason, /not read it in this session/);
  assert.equal(readFileSync(path.join(fx.root, "seen.txt"), "utf8"), "shown by cat\n");
  const read = await host.call("read_file", { path: "seen.txt" }, { session: "sh" });
  assert.equal(read.status, "ok");
  assert.equal(
    (await host.call("edit_file", { path: "seen.txt", old_string: "cat", new_string: "dog" }, { session: "sh" }))
      .status,
    "ok",
  );
});
