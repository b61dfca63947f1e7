// A racer for the race tests: a real process that swaps names in the workspace until stopped. It
// prints "ready" once it runs, and on SIGTERM "swaps N" (how many it made) before it exits.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";

export interface Racer {
  /** Stop it; resolves with the swaps it made. */
  stop(): Promise<number>;
  /** What it printed so far. */
  output(): string;
}

/** Start `command args`, and wait until it says it is ready. */
export async function startRacer(command: string, args: readonly string[]): Promise<Racer> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  while (!out.includes("ready")) {
    if (child.exitCode !== null) assert.fail(`the racer ${command} exited early: ${out}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    output: () => out,
    async stop() {
      const gone = once(child, "exit");
      child.kill("SIGTERM");
      await gone;
      return Number(/swaps (\d+)/.exec(out)?.[1] ?? 0);
    },
  };
}
