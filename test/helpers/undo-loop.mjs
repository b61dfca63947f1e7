// A writer to be killed, for test/stress/undo-exact.test.ts: loads the built library, prints "ready",
// then ("w" after each write call that changed something) changes a few files at random as fast as it can, through every write tool and undo (reading
// each file first), until it is killed. Every content it writes is new (a counter and randomness).
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { createHost } from "../../dist/index.js";

const [root, state] = process.argv.slice(2);
const host = await createHost({ root, stateDir: state, config: { toolsPolicies: {}, agents: {} } });
const session = { session: "killme" };
let n = 0;
const word = () => `w${n++}x${Math.floor(Math.random() * 1e9).toString(36)}`;
const lines = () => Array.from({ length: 1 + Math.floor(Math.random() * 200) }, word).join("\n") + "\n";
const pick = (xs) => xs[Math.floor(Math.random() * xs.length)];
const files = () =>
  readdirSync(root, { recursive: true, encoding: "utf8" }).filter(
    (f) => statSync(path.join(root, f)).isFile() && !/\.latch-\d+-[0-9a-f]+\.tmp$/.test(f),
  );
const fresh = () => pick(["a.txt", "b.txt", "c/d.txt", "e.txt"]);
const ids = [];
process.stdout.write("ready\n");
for (;;) {
  const now = files();
  for (const f of now) await host.call("read_file", { path: f }, session);
  const f = pick(now.length ? now : ["a.txt"]);
  let tool = pick(["write_file", "edit_file", "move_file", "delete_file", "apply_patch", "undo"]);
  let args;
  if (now.length === 0 || tool === "write_file" || (tool === "undo" && ids.length === 0)) {
    tool = "write_file";
    args = { path: now.length ? f : fresh(), content: lines() };
  } else if (tool === "edit_file") args = { path: f, old_string: "\n", new_string: `\n${word()}\n`, replace_all: true };
  else if (tool === "move_file") args = { from: f, to: fresh(), overwrite: true };
  else if (tool === "delete_file") args = { path: f };
  else if (tool === "apply_patch")
    args = { patch: `*** Begin Patch\n*** Add File: ${word()}.txt\n+${word()}\n*** Delete File: ${f}\n*** End Patch` };
  else args = { call_id: pick(ids.slice(-5)) };
  const out = await host.call(tool, args, session);
  if (out.status === "ok" && out.result.call_id) {
    ids.push(out.result.call_id);
    process.stdout.write("w\n");
  }
}
