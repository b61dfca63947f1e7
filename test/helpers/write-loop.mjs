// A writer to be killed: loads the built library, then writes two alternating contents to one file
// as fast as it can, printing "ready" once before the first write.
import { createHost } from "../../dist/index.js";

const [root, state, file, a, b] = process.argv.slice(2);
const host = await createHost({ root, stateDir: state, config: { toolsPolicies: { local_fs: { _max_read_bytes: "8388608", _max_output_bytes: "8388608" } }, agents: {} } });
const big = (ch) => `${ch.repeat(127)}\n`.repeat(Number(process.env.WRITE_LINES ?? 16384));
const contents = [big(a), big(b)];
const first = await host.call("read_file", { path: file, force: true }, { session: "killme" });
if (first.status !== "ok") throw new Error(JSON.stringify(first));
process.stdout.write("ready\n");
for (let i = 0; ; i++) {
  const out = await host.call("write_file", { path: file, content: contents[i % 2] }, { session: "killme" });
  if (out.status !== "ok") throw new Error(JSON.stringify(out));
}
