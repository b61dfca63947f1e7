// `latch call` and `latch tools` as real processes: one JSON object on stdout, exit codes 0/3/1/2,
// a default session shared across calls, arguments from stdin.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI, runCli } from "../helpers/cli.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

let fx: Fixture;
let flags: string[];
before(() => {
  fx = makeFixture();
  flags = ["--root", fx.root, "--state-dir", fx.state];
  fx.write({ "a.txt": "alpha\nbeta\n" });
});
after(() => fx.cleanup());
const env = { LATCH_SESSION: "", LATCH_CONFIG: "" };

describe("latch call", () => {
  test("ok prints the result and exits 0", async () => {
    const r = await runCli(["call", "read_file", '{"path":"a.txt"}', ...flags], { env });
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim().split("\n").length, 1, "exactly one line of JSON");
    assert.equal(r.json.status, "ok");
    assert.equal(r.json.result.content, "alpha\nbeta\n");
  });

  test("a refusal exits 3 with reason and hint", async () => {
    const r = await runCli(["call", "read_file", '{"path":"../../etc/passwd"}', ...flags], { env });
    assert.equal(r.code, 3);
    assert.equal(r.json.status, "refused");
    assert.match(r.json.reason, /outside the workspace/);
    assert.ok(r.json.hint);
  });

  test("an error exits 1 with a code", async () => {
    const r = await runCli(["call", "read_file", '{"path":"missing.txt"}', ...flags], { env });
    assert.deepEqual([r.code, r.json.status, r.json.code], [1, "error", "ENOENT"]);
  });

  test("usage errors exit 2: bad JSON, a missing tool, an unknown flag", async () => {
    const badJson = await runCli(["call", "read_file", "{path:", ...flags], { env });
    assert.equal(badJson.code, 2);
    assert.equal(badJson.json.code, "EUSAGE");
    assert.match(badJson.json.message, /not valid JSON/);
    assert.equal((await runCli(["call", ...flags], { env })).code, 2);
    assert.equal((await runCli(["call", "read_file", "{}", "--bogus", ...flags], { env })).code, 2);
  });

  test("a bad config is an error naming the file and key, and nothing runs", async () => {
    const cfg = path.join(fx.base, "bad.toml");
    writeFileSync(cfg, '[tools_policies.local_fs]\n_max_read_bytes = "lots"\n');
    const r = await runCli(["call", "write_file", '{"path":"never.txt","content":"x"}', ...flags, "--config", cfg], {
      env,
    });
    assert.equal(r.code, 1);
    assert.equal(r.json.code, "ECONFIG");
    assert.match(r.json.message, /bad\.toml:2: `tools_policies\.local_fs\._max_read_bytes`/);
    assert.throws(() => readFileSync(path.join(fx.root, "never.txt")));
  });

  test("two calls share the default session `cli`: a read, then an edit", async () => {
    fx.write({ "s.txt": "one\n" });
    assert.equal((await runCli(["call", "read_file", '{"path":"s.txt"}', ...flags], { env })).code, 0);
    const edit = await runCli(
      ["call", "edit_file", '{"path":"s.txt","old_string":"one","new_string":"two"}', ...flags],
      { env },
    );
    assert.equal(edit.code, 0, edit.stdout);
    assert.equal(readFileSync(path.join(fx.root, "s.txt"), "utf8"), "two\n");
  });

  test("LATCH_SESSION and --session choose another ledger session", async () => {
    fx.write({ "t.txt": "one\n" });
    await runCli(["call", "read_file", '{"path":"t.txt"}', ...flags], { env: { LATCH_SESSION: "agent-7" } });
    const other = await runCli(
      ["call", "edit_file", '{"path":"t.txt","old_string":"one","new_string":"two"}', ...flags],
      { env },
    );
    assert.equal(other.code, 3, "session `cli` has not read it");
    const same = await runCli(
      ["call", "edit_file", '{"path":"t.txt","old_string":"one","new_string":"two"}', ...flags, "--session", "agent-7"],
      { env },
    );
    assert.equal(same.code, 0, same.stdout);
  });

  test("arguments can come from standard input with -", async () => {
    const content = "x".repeat(300_000); // more than one command-line argument may hold
    const r = await runCli(["call", "write_file", "-", ...flags], {
      env,
      input: JSON.stringify({ path: "from-stdin.txt", content }),
    });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(readFileSync(path.join(fx.root, "from-stdin.txt"), "utf8"), content);
  });
});

describe("latch tools", () => {
  test("--json lists every tool with its axis, annotations and a strict JSON Schema", async () => {
    const r = await runCli(["tools", "--json", ...flags], { env });
    assert.equal(r.code, 0);
    const byName = new Map<string, any>(r.json.map((t: any) => [t.name, t]));
    for (const name of ["read_file", "read_file_range", "write_file", "edit_file", "sed"])
      assert.ok(byName.has(name), name);
    const edit = byName.get("edit_file");
    assert.equal(edit.axis, "files.write");
    assert.deepEqual(edit.annotations, { readOnly: false, destructive: true, idempotent: false });
    assert.equal(edit.inputSchema.type, "object");
    assert.equal(edit.inputSchema.additionalProperties, false);
    assert.deepEqual(edit.inputSchema.required, ["path"], "old_string/new_string, or edits: neither is required alone");
    for (const k of ["old_string", "new_string", "edits"]) assert.ok(k in edit.inputSchema.properties, k);
  });

  test("into a pipe whose reader has gone (`latch tools | true`), it ends quietly with 0, no EPIPE trace", () => {
    for (const args of [["--version"], ["--help"], ["tools", ...flags]]) {
      const quoted = args.map((a) => `'${a}'`).join(" ");
      const line = `"${process.execPath}" "${CLI}" ${quoted} | true; echo "latch:\${PIPESTATUS[0]}"`;
      const r = spawnSync("bash", ["-c", line], { env: { ...process.env, ...env }, encoding: "utf8" });
      assert.equal(r.stderr, "", args[0]);
      assert.equal(r.stdout, "latch:0\n", args[0]);
    }
  });

  test("npx latch works from the repo root", async () => {
    const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
    // npx runs the project's own `prepare` (a whole rebuild of dist/, 18 s) before the bin unless told
    // not to: that rebuild deleted the code cache under the tests running beside this one.
    const npx = ["--ignore-scripts", "--no-install", "latch", "tools", ...flags];
    const built = path.join(repo, "dist/cli/program.cjs");
    const builtAt = statSync(built).mtimeMs;
    const { stdout } = await promisify(execFile)("npx", npx, { cwd: repo });
    assert.match(stdout, /^read_file\s+files\.read/m);
    assert.equal(statSync(built).mtimeMs, builtAt, "npx rebuilt dist/ under the other tests");
  });
});
