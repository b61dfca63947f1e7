// latch's version, read from package.json: the one source for `latch --version`, the MCP server's
// serverInfo and the policy log's run_started record. This file runs one folder below package.json
// (src/version.ts, dist/version.js) or, inside the bundle, two (dist/cli/main.js): the nearer
// package.json named "latch" is ours.
import { readFileSync } from "node:fs";

export const LATCH_VERSION: string = readVersion();

function readVersion(): string {
  for (const rel of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "latch") return String(pkg.version);
    } catch {
      // not there, or not JSON: try the next folder up
    }
  }
  return "unknown"; // a copy without package.json still runs; the version says so
}
