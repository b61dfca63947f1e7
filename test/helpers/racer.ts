// A racer for the race tests: a real process that swaps names in the workspace until stopped. It
// prints "ready" once it runs, and on SIGTERM "swaps N" (how many it made) before it exits.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";

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

/** `source` (C) compiled with the machine's compiler into a temp folder, removed after the file's tests; the binary's path. */
export function compileRacer(source: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "latch-racer-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, "racer.c"), source);
  try {
    execFileSync("cc", ["-O2", "-o", path.join(dir, "racer"), path.join(dir, "racer.c")], { stdio: "pipe" });
  } catch (err) {
    throw new Error(`this test compiles its racer: install a C compiler (cc): ${(err as Error).message}`, {
      cause: err,
    });
  }
  return path.join(dir, "racer");
}
