// The property of issue 14: inserting any listed executing or writing option into an allowed line gets
// the line refused or sent to approval, never allowed. Lines are built at random (seeded, so a failure
// replays) from benign base lines that the envelope allows, with one fragment inserted at a random
// place where options go; each is decided by the host (`explain`: parse, plan, envelope, combine),
// with no shell policy and with one allowlisting the programs.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-optprop-");
after(() => fx.cleanup());

/** Benign lines per program, each with the index where options may go (after the subcommand for git). */
const BASE: Record<string, [string[], number][]> = {
  git: [
    [["git", "log", "-n", "5"], 2],
    [["git", "log", "--oneline"], 2],
    [["git", "diff", "--stat"], 2],
    [["git", "show", "HEAD"], 2],
    [["git", "status"], 2],
  ],
  "git-global": [
    [["git", "log", "-n", "5"], 1],
    [["git", "status"], 1],
    [["git", "diff"], 1],
  ],
  "git-grep": [[["git", "grep", "-n", "x"], 2]],
  tar: [
    [["tar", "-tzf", "a.tgz"], 1],
    [["tar", "--list", "-f", "a.tar"], 1],
  ],
  sed: [
    [["sed", "-n", "1,5p", "a.txt"], 1],
    [["sed", "s/a/b/", "a.txt"], 1],
  ],
  awk: [[["awk", "{print $1}", "a.txt"], 1]],
  find: [
    [["find", ".", "-name", "*.ts"], 4],
    [["find", "src", "-type", "f"], 4],
  ],
  node: [[["node", "--version"], 1]],
  python3: [[["python3", "--version"], 1]],
  sort: [[["sort", "-u", "a.txt"], 1]],
};

/** The issue's executing and writing options, each as the words to insert, by where they may go. */
const FRAGMENTS: Record<string, string[][]> = {
  "git-global": [
    ["-c", "core.pager=sh"],
    ["-ccore.pager=sh"],
    ["-c", "diff.x.command=sh"],
    ["-c", "diff.x.textconv=sh"],
    ["-c", "filter.x.process=sh"],
    ["-c", "mergetool.x.cmd=sh"],
    ["-c", "core.fsmonitor=sh"],
    ["-c", "alias.log=!sh"],
    ["-c", "include.path=x.cfg"],
    ["--config-env=core.pager=X"],
    ["--exec-path=."],
  ],
  git: [["--ext-diff"], ["--ext-d"], ["--output=o.txt"], ["--outp=o.txt"], ["--output", "o.txt"], ["--exec=sh"]],
  "git-grep": [["-Osh"], ["--open-files-in-pager=sh"], ["--open"], ["-O"]],
  tar: [
    ["-I", "sh"],
    ["--use-compress-program=sh"],
    ["--use-comp=sh"],
    ["--to-command=sh"],
    ["--checkpoint-action=exec=sh"],
    ["--rsh-command=sh"],
    ["--info-script=x.sh"],
    ["--new-volume-script=x.sh"],
    ["-x"],
    ["--extract"],
    ["-c"],
    ["--remove-files"],
  ],
  sed: [
    ["-i"],
    ["-i.bak"],
    ["--in-place"],
    ["-e", "1e id"],
    ["-e", "s/a/b/e"],
    ["-e", "w out.txt"],
    ["-e", "s/a/b/w out.txt"],
    ["-f", "s.sed"],
  ],
  awk: [["-f", "p.awk"], ["-l", "ext"], ["--load=ext"]],
  find: [
    ["-delete"],
    ["-fprint", "out.txt"],
    ["-fprint0", "out.txt"],
    ["-fls", "out.txt"],
    ["-fprintf", "out.txt", "%p"],
  ],
  node: [["-e", "1"], ["-p", "1"], ["--eval=1"], ["-r", "./x.js"], ["--import=./x.mjs"]],
  python3: [
    ["-c", "1"],
    ["-m", "http.server"],
  ],
  sort: [["-o", "out.txt"], ["--output=out.txt"], ["--compress-program=sh"]],
};

const CONFIG = (
  policy: boolean,
) => `${policy ? `[tools_policies.local_shell]\n_allowed_commands = "git,tar,sed,awk,find,node,python3,sort"\n\n` : ""}[envelopes.prop]
extends = "default"
[envelopes.prop.shell]
grant = "approve"
prefix_allowlist = ["git log", "git diff", "git show", "git status", "git grep", "tar", "sed", "awk", "find", "node", "python3", "sort"]
# the property is the read-only tier's: no contained developer tier (issue 12) widens it here
contained_allowlist = []
`;

/** A small seeded generator (mulberry32), so a failing line can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const quote = (w: string) => `'${w}'`;
const hosts: Record<string, Host> = {};

before(async () => {
  fx.write({ "a.txt": "a\n", "src/x.ts": "x\n" });
  for (const policy of [false, true]) {
    const configPath = path.join(fx.base, `agents-${policy}.toml`);
    writeFileSync(configPath, CONFIG(policy));
    hosts[String(policy)] = await fx.host({ configPath, config: undefined, envelope: "prop" });
  }
});

describe("inserting an executing or writing option into an allowed line never leaves it allowed", () => {
  for (const policy of [false, true]) {
    test(`${policy ? "with" : "without"} a shell policy: every base line is allowed as it is`, async () => {
      for (const bases of Object.values(BASE)) {
        for (const [words] of bases) {
          const ex = await hosts[String(policy)].explain("local_shell", { command: words.map(quote).join(" ") });
          assert.equal(ex.decision, "allow", `${words.join(" ")}: ${ex.reason}`);
        }
      }
    });
    test(`${policy ? "with" : "without"} a shell policy: 300 random insertions, and every fragment at least once`, async () => {
      const next = rng(policy ? 14 : 41);
      const cases: string[][] = [];
      for (const [kind, frags] of Object.entries(FRAGMENTS))
        for (const frag of frags) for (const [words, at] of BASE[kind]) cases.push(insert(words, at, frag, next, kind));
      while (cases.length < 300) {
        const kinds = Object.keys(FRAGMENTS);
        const kind = kinds[Math.floor(next() * kinds.length)];
        const frag = FRAGMENTS[kind][Math.floor(next() * FRAGMENTS[kind].length)];
        const [words, at] = BASE[kind][Math.floor(next() * BASE[kind].length)];
        cases.push(insert(words, at, frag, next, kind));
      }
      for (const words of cases) {
        const command = words.map(quote).join(" ");
        const ex = await hosts[String(policy)].explain("local_shell", { command });
        assert.notEqual(ex.decision, "allow", `${command} was allowed: ${ex.reason}`);
      }
    });
  }
});

/** The fragment put at a random option slot: from `at` to the end, never between an option and its value. */
function insert(words: string[], at: number, frag: string[], next: () => number, kind: string): string[] {
  // git's own options (-c, --exec-path) mean something only before the subcommand.
  if (kind === "git-global") return [...words.slice(0, at), ...frag, ...words.slice(at)];
  const slots: number[] = [];
  for (let i = at; i <= words.length; i++)
    if (!/^-[a-zA-Z]*[nfoC]$|^-name$|^-type$/.test(words[i - 1] ?? "")) slots.push(i);
  const pick = slots[Math.floor(next() * slots.length)];
  return [...words.slice(0, pick), ...frag, ...words.slice(pick)];
}
