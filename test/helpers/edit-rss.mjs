// Reads a line near the end of a big file, then edits a unique line there, through the built library;
// reports the process's peak RSS.
import { createHost } from "../../dist/index.js";

const [root, state, file] = process.argv.slice(2);
const host = await createHost({ root, stateDir: state, config: { toolsPolicies: {}, agents: {} } });
const session = { session: "rss" };
const stat = await host.call("stat_file", { path: file }, session);
const read = await host.call("read_file_range", { path: file, start_line: 1, end_line: 2 }, session);
const edit = await host.call(
  "edit_file",
  { path: file, old_string: "the unique line near the end\n", new_string: "the edited line near the end\n" },
  session,
);
host.close();
process.stdout.write(
  JSON.stringify({ stat: stat.status, read: read.status, edit, maxRssKiB: process.resourceUsage().maxRSS }) + "\n",
);
