// Shell policy throughput: command lines parsed (sh grammar), planned (programs resolved, wrappers
// unwrapped, arguments checked) and decided (toolset gate, envelope, combine) per second, through
// `host.explain("local_shell", {command})`: steps 1–5 of a call, without the log and without running
// anything. A realistic mix: plain commands, sequences, cd, quoting, wrappers, and lines that are
// refused (pipes, redirections, substitutions, variables, globs, denied and unknown programs).
// There is no named peer for this row.
//   node --import tsx bench/shell-policy.ts [--rounds N] [--no-write]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHost } from "../src/host/create-host.js";
import { measuredLine, percentile, publish, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const ROUNDS = argv.includes("--rounds") ? Number(argv[argv.indexOf("--rounds") + 1]) : 200;

const CONFIG = `[tools_policies.local_shell]
_allowed_commands = "ls,cat,echo,git,npm,node,grep,find,head,wc,make,mkdir,touch,true,false,env,xargs,timeout,nice,sh,tsc"
_denied_commands = "rm,dd,sudo,mkfs"

[envelopes.bench]
extends = "default"
[envelopes.bench.shell]
grant = "approve"
blacklist = ["mkfs", "shred"]
prefix_allowlist = ["git status", "git diff", "git log", "ls", "cat", "npm test", "npm run build", "grep", "find", "echo", "head", "wc"]
ask_always = ["rm", "sudo"]
contained_allowlist = []   # the mix's decisions are the read-only tier's, contained or not
[[envelopes.bench.always_deny]]
tool = "*"
when_path = "**/{.ssh,.aws,.gnupg}/**"
`;

/** The mix, each line with the decision it must get (the bench fails if one differs). */
const LINES: [string, "allow" | "approve" | "deny"][] = [
  // plain commands and sequences
  ["ls", "allow"],
  ["ls -la src", "allow"],
  ["git status", "allow"],
  ["git diff --stat HEAD~1", "allow"],
  ["git log --oneline -n 20 -- src/app.ts", "allow"],
  ["cat README.md", "allow"],
  // npm runs package.json scripts (workspace code): never in the read-only tier, whatever the prefix list says
  ["npm test", "approve"],
  ["npm run build && npm test", "approve"],
  ["git status && git diff --stat", "allow"],
  ["make -j2 all || echo failed", "approve"],
  ["mkdir -p build/out; touch build/out/stamp", "approve"],
  ["cd src && ls -la", "allow"],
  ["cd src; grep -rn TODO .", "allow"],
  ["node scripts/gen.js --out build", "approve"],
  ["git commit -m 'fix: handle empty input'", "approve"],
  // quoting tricks
  [`echo "it's a 'test'" 'and "this"'`, "allow"],
  ["grep -rn 'a b|c' src", "allow"],
  ["find . -name '*.ts' -not -path './node_modules/*'", "allow"],
  [`echo '$HOME' '\`id\`' '$(whoami)'`, "allow"],
  [`echo a'b'"c"d`, "allow"],
  ["git stash show stash@{0}", "approve"],
  // wrappers: the inner command is planned and checked too
  ["timeout 30 npm test", "approve"],
  ["nice -n 10 make all", "approve"],
  ["sh -c 'ls && cat README.md'", "approve"],
  ["xargs -n1 echo", "approve"],
  // a long line: one program, many arguments
  [`git add ${Array.from({ length: 60 }, (_, i) => `src/module_${i}/index.ts`).join(" ")}`, "approve"],
  // refused by the planner: constructs it does not run
  ["ls | wc -l", "deny"],
  ["cat a.txt | grep x | head -5", "deny"],
  ["ls > out.txt", "deny"],
  ["cat < input.txt", "deny"],
  ["echo $(whoami)", "deny"],
  ["echo `id`", "deny"],
  ["echo $HOME", "deny"],
  ["ls *.ts", "deny"],
  ["FOO=1 npm test", "deny"],
  ["env CI=1 npm test", "deny"],
  ["sleep 10 &", "deny"],
  ["if true; then ls; fi", "deny"],
  ["for f in a b; do echo $f; done", "deny"],
  ["(cd src && ls)", "deny"],
  ["echo {a,b}", "deny"],
  ["cat ~/.ssh/id_rsa", "deny"],
  // refused by the lists: denied, unknown, hidden inside a wrapper
  ["rm -rf /", "deny"],
  ["sudo ls", "deny"],
  ["curl https://example.com/install.sh", "deny"],
  ["timeout 5 rm -rf build", "deny"],
  ["sh -c 'curl x | sh'", "deny"],
  ["env dd if=/dev/zero of=disk", "deny"],
  ["cd .. && ls", "deny"],
  ["cat /etc/passwd", "deny"],
];

/** What the figures mean; kept with the generated table. */
const NOTES = `
**Fixed in this round.** The first run gave 36 lines/s (p50 19 ms, load ~9): every plan looks each configured program
name (the 21 allowed and 4 denied here) up in every PATH folder (11 on this machine), and each miss went through
\`fs/promises\` with a thrown ENOENT. The lookups are synchronous now and a miss throws nothing (src/shell/resolve.ts,
ccbd738): 4–5× the throughput on the same loaded machine.

**Then** the configured names (21 allowed and 4 denied here) were looked up again for every line, ~250 \`stat\`
calls. Where each name was found is now kept while the PATH folders keep their mtimes, and for at most a second
(src/shell/resolve.ts; installing, removing or renaming a program changes its folder's mtime); the found file's
realpath and permissions are still checked on every plan, so a retargeted link or a chmod is seen at once.
test/shell/plan-table.test.ts checks that a program installed or removed between two plans is seen.

**With the program tables (issue 14).** Each command is now also classified by its program's table
(src/shell/programs/), every argument is checked in every mode (cluster tails, git's \`REV:PATH\`, sed and awk file
names, ancestors of the control plane), and npm's two lines go to approval (workspace code is never in the read-only
tier). Run back to back against the tree before these changes (f48f753) on a machine at load 24–27 on 2 cores:
base 168 and 166 lines/s (p50 647 and 618 µs), with the tables 137 and 174 lines/s (p50 697 and 672 µs), 60 rounds
each: about 8% more per line at p50, inside the run-to-run spread on throughput. In the CPU profile the tables
themselves (\`findingsOf\`) take under 1% of the samples; the sh parse still dominates. The 490 lines/s target is
for a quiet machine: hold it against the table above when its load is under 2.

**What costs the rest** (\`node --cpu-prof\`): the sh parse in mvdan-sh (Go compiled to JavaScript by GopherJS, with
its own object conversions and garbage); the lookup of each command's own program on PATH and its \`realpath\`; the
argument checks (one canonicalize per argument that could be a path); the envelope. Refused lines are the cheapest:
most stop at the parse or at the first command.
`.trim();

async function main(): Promise<void> {
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-shell-"));
  const root = path.join(base, "ws");
  mkdirSync(path.join(root, "src"), { recursive: true });
  mkdirSync(path.join(root, "scripts"), { recursive: true });
  writeFileSync(path.join(root, "README.md"), "# demo\n");
  writeFileSync(path.join(root, "src", "app.ts"), "export {};\n");
  writeFileSync(path.join(base, "agents.toml"), CONFIG);
  const host = await createHost({
    root,
    stateDir: path.join(base, "state"),
    configPath: path.join(base, "agents.toml"),
    envelope: "bench",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
  });
  const load = watchLoad();
  const times: number[] = [];
  const byKind: Record<string, number[]> = { allow: [], approve: [], deny: [] };
  try {
    // The first parse loads the sh grammar; check every verdict while warming up.
    const wrong: string[] = [];
    for (const [line, want] of LINES) {
      const ex = await host.explain("local_shell", { command: line });
      if (ex.decision !== want) wrong.push(`Expected \`${line}\` to be ${want}, got ${ex.decision}: ${ex.reason}`);
    }
    if (wrong.length) throw new Error(wrong.join("\n"));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [line, want] of LINES) {
        const t0 = performance.now();
        await host.explain("local_shell", { command: line });
        const us = (performance.now() - t0) * 1000;
        times.push(us);
        byKind[want].push(us);
      }
    }
  } finally {
    load.stop();
    host.close();
    rmSync(base, { recursive: true, force: true });
  }
  const rate = (xs: number[]) => (xs.length / xs.reduce((a, b) => a + b, 0)) * 1e6;
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${xs.length / ROUNDS} | ${xs.length} | ${rate(xs).toFixed(0)} | ${percentile(xs, 50).toFixed(0)} | ${percentile(xs, 99).toFixed(0)} |`;
  const counts = Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, v.length / ROUNDS]));
  const section = [
    measuredLine(`node --import tsx bench/shell-policy.ts --rounds ${ROUNDS}`, load),
    "",
    'Each line goes through `host.explain("local_shell", {command})`: the registry and schema, the toolset gate (sh parse with mvdan-sh, the planner: programs resolved on PATH, wrappers such as `timeout`, `env` and `sh -c` unwrapped and their inner commands checked, arguments checked for paths outside the root), the envelope (an `approve` grant with a `prefix_allowlist`, `ask_always`, `blacklist` and an `always_deny` path rule) and the combine step; no log line is written and nothing runs. That is all the policy work a `local_shell` call does before its log entry.',
    `The mix: ${LINES.length} lines (${counts.allow} allowed, ${counts.approve} needing approval, ${counts.deny} refused: pipes, redirections, \`$(…)\`, backticks, \`$VAR\`, globs, \`VAR=x\` prefixes, \`&\`, compound commands, subshells, brace expansion, \`~\`, denied and unknown programs, a denied program inside a wrapper, \`cd\` out of the root, a path outside the root), each line's decision checked, repeated ${ROUNDS} times after a warm-up round. Per-line time with \`performance.now()\`, one line at a time.`,
    "**No named peer** exists for this row: no other MCP filesystem or shell server parses and plans a command line under a policy, so there is nothing to put beside it.",
    "",
    "| lines | in the mix | lines timed | lines/s | p50 (µs) | p99 (µs) |",
    "|---|---|---|---|---|---|",
    row("all", times),
    row("allowed", byKind.allow),
    row("approval", byKind.approve),
    row("refused", byKind.deny),
    "",
    NOTES,
  ].join("\n");
  publish("shell-policy", "Shell policy: command lines parsed, planned and checked per second", section);
}

await main();
