// The four scenes every SDK adapter plays (issue 34), on a real workspace, state dir and policy log:
// a host on the default envelope (reads run, edits ask a person), one file, and what the log decided.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

export const BEFORE = "one\ntwo\nthree\n";
export const AFTER = "one\nTWO\nthree\n";
export const SNEAKED = "one\ntwo\nthree\nSNEAKED IN\n";
export const EDIT = { path: "notes.txt", old_string: "two", new_string: "TWO" };

export interface Scene {
  fx: Fixture;
  host: Host;
  /** The file on disk now. */
  disk(): string;
  /** Someone changes the file (after the person saw the diff). */
  sneak(): void;
  /** The policy log's decisions for a tool (closes the host). */
  decisions(tool: string): { final: string; reason: string }[];
}

export async function scene(prefix: string): Promise<Scene> {
  const fx = makeFixture(prefix);
  fx.write({ "notes.txt": BEFORE });
  const host = await fx.host({ envelope: "default" });
  const file = path.join(fx.root, "notes.txt");
  return {
    fx,
    host,
    disk: () => readFileSync(file, "utf8"),
    sneak: () => writeFileSync(file, SNEAKED),
    decisions: (tool) => loggedDecisions(host, tool),
  };
}

/** The policy log's decisions for a tool, once the host is closed. */
export function loggedDecisions(host: Host, tool: string): { final: string; reason: string }[] {
  host.close();
  return readFileSync(host.policyLog, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_decision" && r.tool === tool);
}
