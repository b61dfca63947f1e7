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

/** Exchanges A and B (renameat2 RENAME_EXCHANGE) without a pause until SIGTERM. */
export const EXCHANGER = String.raw`
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/syscall.h>
static volatile long swaps = 0;
static void stop(int s) { (void)s; char b[64]; int n = snprintf(b, sizeof b, "swaps %ld\n", swaps); write(1, b, n); _exit(0); }
int main(int c, char **v) {
  (void)c; signal(SIGTERM, stop); printf("ready\n"); fflush(stdout);
  for (;;) if (syscall(SYS_renameat2, AT_FDCWD, v[1], AT_FDCWD, v[2], 2) == 0) swaps++;
}
`;
