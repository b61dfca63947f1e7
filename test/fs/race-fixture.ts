// The race of issue 26, set up once for its tests: a workspace folder `d` that a real process swaps
// between a real folder and a symlink to a folder outside the workspace, and the checks made after
// every run: nothing read from outside (a unique marker planted there is in no result), nothing
// created or changed outside (the tree compared before and after), no temp file left anywhere.
import assert from "node:assert/strict";
import { randomBytes, createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CallResult } from "../../src/host/types.js";
import { startRacer, type Racer } from "../helpers/racer.js";

const SWAPPER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/swap-folder.mjs");

/** How long each tool is raced: ~1.5 s by default so `npm test` stays fast, 20 s with LATCH_STRESS=1. */
export const RACE_MS = process.env.LATCH_STRESS === "1" ? 20_000 : Number(process.env.LATCH_RACE_MS ?? 1500);

export interface Outside {
  dir: string;
  marker: string;
}

/** A folder outside the root holding the files a swapped `d/…` would name, each with the marker. */
export function makeOutside(base: string, names: readonly string[] = ["credentials", "x.txt", "e.txt"]): Outside {
  const dir = path.join(base, "outside");
  const marker = `OUTSIDE-MARKER-${randomBytes(8).toString("hex")}`;
  mkdirSync(path.join(dir, ".aws"), { recursive: true });
  for (const n of names) writeFileSync(path.join(dir, n), `${marker}\n`);
  writeFileSync(path.join(dir, ".aws/credentials"), `[default]\naws_secret_access_key = ${marker}\n`);
  return { dir, marker };
}

/** Every entry under `dir` (not following links): type, and a file's sha256 or a link's target. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    const abs = path.join(dir, rel);
    const st = lstatSync(abs);
    if (st.isSymbolicLink()) out[rel] = `link ${readlinkSync(abs)}`;
    else if (st.isDirectory()) {
      out[rel] = "dir";
      for (const n of readdirSync(abs)) walk(path.join(rel, n));
    } else out[rel] = `file ${createHash("sha256").update(readFileSync(abs)).digest("hex")} ${st.nlink}`;
  };
  walk(".");
  return out;
}

/** Names of latch's temp files (`.NAME.latch-PID-….tmp`) anywhere under `dir`, links not followed. */
export function tempFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (abs: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (/\.latch-\d+-[0-9a-f]+\.tmp$/.test(e.name)) found.push(path.join(abs, e.name));
      if (e.isDirectory()) walk(path.join(abs, e.name));
    }
  };
  walk(dir);
  return found;
}

/** The racer: a real process swapping `root/d` and a link to `target` until stopped. */
export function startSwapper(root: string, target: string, name = "d"): Promise<Racer> {
  return startRacer(process.execPath, [SWAPPER, path.join(root, name), path.join(root, `.${name}-saved`), target]);
}

/** What the calls ended with, counted by status and the first words of the reason. */
export class Tally {
  readonly seen = new Map<string, number>();
  readonly results: CallResult[] = [];
  ok = 0;
  other = 0;

  add(r: CallResult): CallResult {
    this.results.push(r);
    if (r.status === "ok") this.ok++;
    else this.other++;
    const said = r.status === "ok" ? "" : r.status === "refused" ? r.reason : `${r.code}: ${r.message}`;
    // Counted by kind: paths and numbers folded, so one line stands for each reason.
    const why = `${r.status} ${said
      .replace(/`[^`]*`|\/\S+/g, "P")
      .replace(/\d+/g, "N")
      .slice(0, 90)}`;
    this.seen.set(why, (this.seen.get(why) ?? 0) + 1);
    return r;
  }

  /** No result holds the outside marker: not one byte was read from there. */
  assertNoMarker(marker: string): void {
    for (const r of this.results)
      assert.ok(!JSON.stringify(r).includes(marker), `read from outside: ${JSON.stringify(r)}`);
  }

  summary(): string {
    return [...this.seen.entries()].map(([k, n]) => `${n}× ${k}`).join("\n");
  }
}

/** The attacker's script: the swap loop of test/helpers/swap-folder.mjs, as one `node -e`. */
export function swapper(target: string): string {
  return [
    `const fs = require("fs");`,
    `const swap = () => {`,
    `  try { fs.renameSync("d", ".d-saved"); fs.symlinkSync(${JSON.stringify(target)}, "d"); } catch {}`,
    `  try { fs.unlinkSync("d"); } catch {}`,
    `  try { fs.renameSync(".d-saved", "d"); } catch { try { fs.rmSync("d", { recursive: true, force: true }); fs.renameSync(".d-saved", "d"); } catch {} }`,
    `};`,
    `swap(); console.log("ready");`,
    `const loop = () => { for (let i = 0; i < 200; i++) swap(); setImmediate(loop); }; loop();`,
  ].join("\n");
}

/** The longest a race runs on past RACE_MS while `seen()` does not yet hold. */
const RACE_CAP_MS = 60_000;

/**
 * Run `step(i)` over and over for `ms`, then on until `seen()` holds (the race reached the calls), at
 * most RACE_CAP_MS in all: on a loaded machine (files run side by side) 1.5 s may hold only a step or
 * two, none of them raced, and the test would fail for want of a race rather than for a bug.
 */
export async function forMs(ms: number, step: (i: number) => Promise<void>, seen = () => true): Promise<number> {
  const started = Date.now();
  let i = 0;
  while (Date.now() - started < ms || (!seen() && Date.now() - started < RACE_CAP_MS)) await step(i++);
  return i;
}
