// Shared by the browse benches: run a peer (rg, grep, find) in the corpus, timed, and read a grep
// listing (rg's `path:N:…` or latch's `path:N: …`) as its set of `path:N`.
import { spawn } from "node:child_process";

export function runTimed(cwd: string, cmd: string, args: string[]): Promise<{ ms: number; out: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", reject);
    child.on("close", () => resolve({ ms: performance.now() - t0, out: Buffer.concat(chunks).toString("utf8") }));
  });
}

/** `path:N:...` lines (rg, grep) or `path:N: ...` (latch) as a set of "path:N". */
export function lineSet(text: string): Set<string> {
  const s = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^(?:\.\/)?([^:]+):(\d+):/.exec(line);
    if (m) s.add(`${m[1]}:${m[2]}`);
  }
  return s;
}
