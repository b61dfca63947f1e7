// Where a running `latch console` for a state dir can be reached, so a waiting call can name it to the
// person (an MCP notification, the tool result) and the console's page can link to the request. The
// file holds the address only, never the token: whatever reads it (a model, through a tool result)
// learns where to look, not how to answer.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const FILE = "console.json";

/** Record this console's page address for the state dir (mode 0600). */
export function writeConsoleLink(stateDir: string, url: string): void {
  writeFileSync(path.join(stateDir, FILE), JSON.stringify({ url, pid: process.pid }) + "\n", { mode: 0o600 });
}

/** Remove the record, if it is still this process's. */
export function removeConsoleLink(stateDir: string): void {
  const file = path.join(stateDir, FILE);
  if (readLink(file)?.pid === process.pid) rmSync(file, { force: true });
}

/** The page address of a console serving this state dir, when one runs. */
export function consoleLink(stateDir: string): string | undefined {
  const rec = readLink(path.join(stateDir, FILE));
  if (!rec) return undefined;
  try {
    process.kill(rec.pid, 0); // a console that died without cleaning up is not named
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return undefined;
  }
  return rec.url;
}

function readLink(file: string): { url: string; pid: number } | undefined {
  try {
    const rec = JSON.parse(readFileSync(file, "utf8")) as { url?: unknown; pid?: unknown };
    return typeof rec.url === "string" && typeof rec.pid === "number" ? { url: rec.url, pid: rec.pid } : undefined;
  } catch {
    return undefined;
  }
}
