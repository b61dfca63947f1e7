// What every tool touches, as the policy reads it, is pinned here: for a representative call of each
// registered tool, the typed effect (src/policy/effect.ts) that `host.explain` planned over a real
// fixture — the axis from the tool's own definition, the paths read, written and walked (relative to
// the fixture root), the commands with the paths their words may name, the URLs. A change to what any
// tool touches fails this test until the snapshot is rewritten on purpose:
//   UPDATE_SNAPSHOTS=1 node --import tsx --test test/effects.test.ts
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Effect, PathRef } from "../src/policy/effect.js";
import { TOOLS } from "../src/registry.js";
import { PreImages } from "../src/fs/preimages.js";
import { sha256 } from "../src/fs/text.js";
import { runCli } from "./helpers/cli.js";
import { makeFixture } from "./helpers/fixture.js";
import { matchSnapshot } from "./helpers/snapshot.js";

const fx = makeFixture("latch-effects-");
after(() => fx.cleanup());
// A program of the fixture's own on the PATH, so run_tool's plan names the same path on every machine.
const bin = path.join(fx.base, "bin");
mkdirSync(bin);
writeFileSync(path.join(bin, "tally"), '#!/bin/sh\nwc -l "$@"\n', { mode: 0o755 });
fx.write({
  "notes/a.txt": "alpha\nbeta\n",
  "docs/guide.md": "# Guide\n",
  "src/a.ts": "export function f(x: number) {\n  return x + 1;\n}\n",
  "img.png": "not really a png",
  ".agents/skills/demo/SKILL.md": "---\nname: demo\ndescription: A skill for the effect snapshot\n---\nDo it.\n",
});

const PATCH =
  "*** Begin Patch\n*** Update File: notes/a.txt\n*** Move to: notes/moved.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n";

/** Representative calls: at least one for every registered tool (the test checks the set). */
const CASES: [string, Record<string, unknown>][] = [
  ["read_file", { path: "notes/a.txt" }],
  ["read_file_range", { path: "notes/a.txt", start_line: 2 }],
  ["read_many_files", { paths: ["notes/a.txt", "docs/guide.md"] }],
  ["read_many_files", { glob: "**/*.md", path: "docs" }],
  ["read_media", { path: "img.png" }],
  ["write_file", { path: "notes/new.txt", content: "x\n" }],
  ["edit_file", { path: "notes/a.txt", old_string: "beta", new_string: "gamma" }],
  ["apply_patch", { patch: PATCH }],
  ["sed", { path: "notes/a.txt", pattern: "alpha", replacement: "ALPHA" }],
  ["move_file", { from: "notes/a.txt", to: "docs/a.txt" }],
  ["undo", { call_id: "c-effects" }],
  ["delete_file", { path: "docs/guide.md" }],
  ["create_directory", { path: "out/reports" }],
  ["list_dir", { path: "src" }],
  ["grep", { pattern: "alpha", path: "." }],
  ["grep", { pattern: "alpha", path: "notes/a.txt" }],
  ["find_files", { pattern: "*.ts", path: "src" }],
  ["stat_file", { path: "notes/a.txt" }],
  ["count_stats", { path: "." }],
  ["hash_edit", { path: "notes/a.txt", edits: [{ op: "delete", pos: "1#AB" }] }],
  ["outline", { path: "src/a.ts" }],
  ["ast_search", { pattern: "return $X", lang: "typescript", path: "src" }],
  ["ast_rewrite_preview", { pattern: "x + 1", rewrite: "x + 2", lang: "typescript", path: "src/a.ts" }],
  ["local_shell", { command: "cd src; cat a.ts && wc -l ../docs/guide.md" }],
  ["local_shell", { command: "git", args: ["diff", "--no-index", "notes/a.txt", "docs/guide.md"] }],
  ["local_shell", { command: "timeout", args: ["5", "grep", "-n", "alpha", "notes/a.txt"] }],
  ["process_output", { id: "p1" }],
  ["process_input", { id: "p1", text: "y\n" }],
  ["process_kill", { id: "p1" }],
  ["process_list", {}],
  ["run_tool", { tool_id: "tally", arguments: ["notes/a.txt", "--files0-from=docs/guide.md"] }],
  ["skill", { name: "demo" }],
  ["url_fetch", { url: "https://Example.com./docs?q=1" }],
  ["web_search", { query: "latch policy effect" }],
];

/** A path as the snapshot shows it: root-relative, else under the fixture's base, else as is. */
function shown(p: string): string {
  if (p === fx.root) return ".";
  if (p.startsWith(fx.root + "/")) return p.slice(fx.root.length + 1);
  if (p.startsWith(fx.base + "/")) return `<base>/${p.slice(fx.base.length + 1)}`;
  return p;
}

/** A system program by its name: /usr/bin/cat here is /bin/cat on another machine. */
const program = (p: string) => (p.startsWith(fx.base + "/") ? shown(p) : `<PATH>/${path.basename(p)}`);

const refs = (ps: PathRef[]) => ps.map((p) => p.rel ?? shown(p.abs));

function render(e: Effect): Record<string, unknown> {
  return {
    axis: e.axis,
    reads: refs(e.reads),
    writes: refs(e.writes),
    walks: refs(e.walks),
    ...(e.shell
      ? {
          shell: {
            steps: e.shell.steps.map((s) => ({
              argv: s.argv,
              cwd: shown(s.cwd),
              program: s.program === undefined ? null : program(s.program),
            })),
            commands: e.shell.commands.map((c) => ({
              argv: c.argv,
              name: c.name ?? null,
              capabilities: c.capabilities ?? null,
            })),
            ...(e.shell.raw !== undefined ? { raw: e.shell.raw } : {}),
            path_arguments: refs(e.shell.paths),
          },
        }
      : {}),
    ...(e.web ? { web: e.web } : {}),
  };
}

test("every tool's typed effect for a representative call matches the snapshot", async () => {
  assert.deepEqual(
    [...new Set(CASES.map(([t]) => t))].sort(),
    TOOLS.map((t) => t.name).sort(),
    "every registered tool has a case here, and every case names a registered tool",
  );
  const host = await fx.host({
    config: { toolsPolicies: { catalog: { _tools: "tally" } }, agents: {} },
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: path.join(fx.base, "home"), EXA_API_KEY: "not-used-by-a-plan" },
  });
  // A write call in the undo store, as write_file keeps it (src/fs/preimages.ts), for undo's case.
  const store = new PreImages(host.state.db);
  const info = { callId: "c-effects", root: host.root, session: "default", tool: "write_file", cap: 1 << 20 };
  await store
    .journal(info)
    .keep([{ target: { rel: "docs/guide.md" }, before: Buffer.from("# Old\n"), afterSha: sha256("# Guide\n") }]);
  store.close();
  const now: unknown[] = [];
  try {
    for (const [tool, args] of CASES) {
      const ex = await host.explain(tool, args);
      const toolset = ex.gates.find((g) => g.gate === "toolset");
      // A call refused or failing before its plan would pin an empty effect: each case must plan.
      assert.equal(toolset?.action, "allow", `${tool} ${JSON.stringify(args)}: ${ex.reason}`);
      assert.ok(ex.effect, tool);
      assert.equal(ex.effect.axis, TOOLS.find((t) => t.name === tool)!.axis, `${tool}: the axis is its definition's`);
      now.push({ tool, args, effect: render(ex.effect) });
    }
  } finally {
    host.close();
  }
  matchSnapshot("effects.json", now, "what a tool touches");
});

test("latch explain prints the effect every gate read: a walk root for grep over a folder, writes for a move", async () => {
  const args = ["explain", "--root", fx.root, "--state-dir", fx.state];
  const grep = await runCli([...args, "grep", '{"pattern": "alpha", "path": "src"}']);
  assert.equal(grep.code, 0, grep.stderr);
  assert.deepEqual(grep.json.effect, {
    axis: "files.read",
    reads: [],
    writes: [],
    walks: [{ abs: path.join(fx.root, "src"), rel: "src" }],
  });
  const move = await runCli([...args, "move_file", '{"from": "notes/a.txt", "to": "docs/b.txt"}']);
  assert.equal(move.code, 0, move.stderr);
  assert.deepEqual(
    (move.json.effect as Effect).writes.map((p) => p.rel),
    ["notes/a.txt", "docs/b.txt"],
  );
  assert.equal(move.json.decision, "allow", "auto_edit allows a move in the workspace");
});
