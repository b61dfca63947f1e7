// The in-process fixture of bench/walk-cost.ts and bench/edit-syscalls.ts: a host made with the
// createHost of a checkout's source (this one, or another commit's `git archive`, to compare), over a
// fresh workspace holding one 4 KB file three folders down (three folders for the walk to open).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Host } from "../src/host/create-host.js";

/** The file's path in the workspace; its last line is "END", what the edit cycles replace first. */
export const DEEP_FILE = "src/deep/er/f.txt";

export async function deepFileHost(repo: string, name: string): Promise<{ host: Host; done: () => void }> {
  const { createHost } = (await import(
    path.join(repo, "src/host/create-host.ts")
  )) as typeof import("../src/host/create-host.js");
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), `latch-${name}-`)));
  const root = path.join(base, "ws");
  mkdirSync(path.join(root, path.dirname(DEEP_FILE)), { recursive: true });
  writeFileSync(path.join(root, DEEP_FILE), "x".repeat(4000) + "\nEND\n");
  const host = await createHost({
    root,
    stateDir: path.join(base, "state"),
    config: { toolsPolicies: {}, agents: {} },
    env: { PATH: process.env.PATH ?? "", HOME: base },
  });
  return {
    host,
    done: () => {
      host.close();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
