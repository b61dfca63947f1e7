// latch's version, read from package.json: the one source for `latch --version`, the MCP server's
// serverInfo and the policy log's run_started record. This file sits one folder below package.json
// in src/, in dist/ and (as dist/cli/main.js) in the bundle, so one relative URL serves all three.
import { readFileSync } from "node:fs";

export const LATCH_VERSION: string = readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return String(pkg.version);
  } catch {
    return "unknown"; // a copy without package.json still runs; the version says so
  }
}
