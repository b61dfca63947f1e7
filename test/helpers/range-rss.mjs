// Reads a line window through the built library and reports the process's peak RSS.
import { createHost } from "../../dist/index.js";

const [root, state, file, start] = process.argv.slice(2);
const host = await createHost({ root, stateDir: state, config: { toolsPolicies: {}, agents: {} } });
const out = await host.call("read_file_range", { path: file, start_line: Number(start) }, { session: "rss" });
host.close();
process.stdout.write(JSON.stringify({ out, maxRssKiB: process.resourceUsage().maxRSS }) + "\n");
