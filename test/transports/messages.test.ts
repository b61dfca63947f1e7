// Messages that say what is wrong and the fix (issue 15, point 8), through the built `latch mcp` over
// stdio and over HTTP: a path written from the workspace above `_allowed_dir`, a program path after a
// `cd` into the folder the shell already starts in, and one status for "too many matches" in edit_file
// and sed.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { connectOver, modelView, TRANSPORTS, type ToolResult, type Transport } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());
fx.write({ "README.md": "readme\n", "src/x.txt": "x\n", "src/hi.sh": "#!/bin/sh\necho hi\n", "twice.txt": "a\na\n" });
chmodSync(path.join(fx.root, "src", "hi.sh"), 0o755);
const conf = (name: string, body: string) => {
  const file = path.join(fx.base, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, body);
  return file;
};
const fsLimited = conf("fs.toml", '[tools_policies.local_fs]\n_allowed_dir = "src"\n');
const shellLimited = conf("shell.toml", '[tools_policies.local_shell]\n_allowed_dir = "src"\n');
const src = path.join(fx.root, "src");
const BASE = ["--root", fx.root, "--state-dir", fx.state, "--envelope", "default", "--yes"];

/** One `latch mcp` (with `config`, if given) over `transport`; `fn` makes its calls there. */
async function withServer(
  transport: Transport,
  config: string | undefined,
  fn: (call: (name: string, args: Record<string, unknown>) => Promise<ToolResult>) => Promise<void>,
): Promise<void> {
  const { client, close } = await connectOver(transport, [...BASE, ...(config ? ["--config", config] : [])]);
  try {
    await fn(async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult);
  } finally {
    await close();
  }
}

for (const transport of TRANSPORTS) {
  test(`${transport}: _allowed_dir: a path written from the workspace says where relative paths resolve and what to write`, () =>
    withServer(transport, fsLimited, async (call) => {
      const outside = await call("read_file", { path: "README.md" });
      assert.equal(outside.isError, true);
      assert.match(
        modelView(outside),
        new RegExp(
          `Relative paths resolve in ${src} \\(tools_policies\\.local_fs\\._allowed_dir\\), not in ${fx.root}; ${path.join(fx.root, "README.md")} exists but is outside that folder`,
        ),
      );
      const doubled = await call("read_file", { path: "src/x.txt" });
      assert.equal(doubled.isError, true);
      assert.match(modelView(doubled), /not in .*: this one is `x\.txt`\./);
      // A name that exists nowhere gets the plain answer, and nothing outside the workspace is probed.
      const nowhere = await call("read_file", { path: "nope.txt" });
      assert.doesNotMatch(modelView(nowhere), /Relative paths resolve/);
    }));

  test(`${transport}: local_shell _allowed_dir: \`cd src && ./hi.sh\` says the folder does not exist and where the line starts`, () =>
    withServer(transport, shellLimited, async (call) => {
      const r = await call("local_shell", { command: "cd src && ./hi.sh" });
      assert.equal(r.isError, true);
      const text = modelView(r);
      assert.doesNotMatch(text, /on the PATH/);
      assert.match(text, new RegExp(`the folder it runs in, ${path.join(src, "src")}, does not exist`));
      assert.match(
        text,
        new RegExp(`The command line starts in ${src} \\(tools_policies\\.local_shell\\._allowed_dir\\)`),
      );
      const ok = await call("local_shell", { command: "./hi.sh" });
      assert.equal(ok.isError, undefined, modelView(ok));
    }));

  test(`${transport}: too many matches is one outcome: edit_file and sed both answer the error ECOUNT`, () =>
    withServer(transport, undefined, async (call) => {
      await call("read_file", { path: "twice.txt" });
      const edit = await call("edit_file", { path: "twice.txt", old_string: "a", new_string: "b" });
      const sed = await call("sed", { path: "twice.txt", pattern: "a", replacement: "b" });
      for (const [name, r] of [
        ["edit_file", edit],
        ["sed", sed],
      ] as const) {
        assert.equal(r.isError, true, name);
        assert.match(modelView(r), /^Error ECOUNT/, `${name}: ${modelView(r)}`);
      }
      assert.equal(readFileSync(path.join(fx.root, "twice.txt"), "utf8"), "a\na\n", "neither changed the file");
    }));
}
