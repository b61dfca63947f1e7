// One of test/stress/concurrent-edits.test.ts's editors: a host of its own (as each `latch mcp` is),
// on the workspace and state dir it is given, shared with another such process. It loads the built
// library, prints "loaded", and once a line arrives on stdin (so both start together) makes `rounds`
// read-then-edit cycles on one file as session `name`: each edit puts `name-i` above the END line.
// It prints one JSON line per edit (its mark, status, reason) and nothing else.
import { createHost } from "../../dist/index.js";

const [root, state, file, name, rounds] = process.argv.slice(2);
const host = await createHost({ root, stateDir: state, config: { toolsPolicies: {}, agents: {} } });
const session = { session: name };
process.stdout.write("loaded\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

for (let i = 0; i < Number(rounds); i++) {
  const read = await host.call("read_file", { path: file, force: true }, session);
  if (read.status !== "ok") throw new Error(`read ${i}: ${JSON.stringify(read)}`);
  const mark = `${name}-${i}`;
  const edit = await host.call("edit_file", { path: file, old_string: "END\n", new_string: `${mark}\nEND\n` }, session);
  process.stdout.write(`${JSON.stringify({ mark, status: edit.status, reason: edit.reason })}\n`);
}
host.close();
