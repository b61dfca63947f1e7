// The code blocks of README.md and docs/*.md, with the mark on the line before each:
// `<!-- runnable -->` (a test runs it as written) or `<!-- not run: why -->` (said why, in the docs).
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CLI } from "../helpers/cli.js";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface Block {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string: sh, ts, toml, json, text, … ("" when none). */
  lang: string;
  mark?: "runnable" | "not run";
  /** For `not run`: the reason the docs give. */
  why?: string;
  code: string;
}

export const PAGES = [
  "README.md",
  ...readdirSync(path.join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

export function docBlocks(): Block[] {
  const out: Block[] = [];
  for (const page of PAGES) {
    const lines = readFileSync(path.join(REPO, page), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(.*)$/.exec(lines[i]);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
      if (end < 0) throw new Error(`${page}:${i + 1}: a code block that never closes`);
      const prev = i > 0 ? lines[i - 1] : "";
      const notRun = /^<!-- not run: (.*?) -->$/.exec(prev);
      out.push({
        page,
        line: i + 1,
        lang: open[1].trim(),
        mark: prev === "<!-- runnable -->" ? "runnable" : notRun ? "not run" : undefined,
        why: notRun?.[1].trim(),
        code: lines.slice(i + 1, end).join("\n") + "\n",
      });
      i = end;
    }
  }
  return out;
}

/** A folder holding `latch`, the built CLI, to put first on PATH. */
export function latchBin(base: string): string {
  const bin = path.join(base, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, "latch"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(path.join(bin, "latch"), 0o755);
  return bin;
}
