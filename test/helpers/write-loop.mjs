// A writer to be killed: loads the built library and prints "loaded"; once a line arrives on stdin
// (so a test can boot the next writer while the last one runs), it turns one file back and forth
// between two whole contents (every line "a…a" or every line "b…b") as fast as it can, printing
// "ready" once before the first change and "w" after each. WRITE_TOOL picks the tool: write_file
// (the whole content), edit_file (replace_all of the line) or sed (all: true).
import { createHost } from "../../dist/index.js";

const [root, state, file, a, b] = process.argv.slice(2);
const tool = process.env.WRITE_TOOL ?? "write_file";
const lines = Number(process.env.WRITE_LINES ?? 16384);
const host = await createHost({
  root,
  stateDir: state,
  config: { toolsPolicies: { local_fs: { _max_read_bytes: "8388608", _max_output_bytes: "8388608" } }, agents: {} },
});
const line = (ch) => `${ch.repeat(127)}\n`;
const session = { session: "killme" };
process.stdout.write("loaded\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

function args(from, to) {
  if (tool === "write_file") return { path: file, content: line(to).repeat(lines) };
  if (tool === "edit_file") return { path: file, old_string: line(from), new_string: line(to), replace_all: true };
  if (tool === "sed") return { path: file, pattern: line(from), replacement: line(to), all: true };
  throw new Error(`Expected WRITE_TOOL to be write_file, edit_file or sed, got \`${tool}\``);
}

const first = await host.call("read_file", { path: file, force: true }, session);
if (first.status !== "ok") throw new Error(JSON.stringify(first));
// Start from whichever content the last killed writer left.
let now = first.result.content.startsWith(a) ? a : b;
process.stdout.write("ready\n");
for (;;) {
  const next = now === a ? b : a;
  const out = await host.call(tool, args(now, next), session);
  if (out.status !== "ok") throw new Error(JSON.stringify(out));
  now = next;
  process.stdout.write("w\n");
}
