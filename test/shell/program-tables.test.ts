// The program tables, row by row: every attack form of issue 14 (a program made to run a command,
// write a file or reach a path through its own options) and the benign forms that must stay allowed,
// each planned under a shell policy (refused, or planned with these capabilities) and, for the
// capability rows, with no policy too (the same capabilities: they do not depend on a policy).
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { Refusal } from "../../src/errors.js";
import type { ShellPlan } from "../../src/shell/plan.js";
import { TABLES, checkExamples, checkWrapperExamples, tableFor } from "../../src/shell/programs/index.js";
import {
  AS_OTHER_USER,
  SHELLS,
  UNMODELLED_RUNNERS,
  WRAPPER_EXAMPLES,
  WRAPPER_NAMES,
} from "../../src/shell/wrappers.js";
import { makeShellFixture } from "./shell-fixture.js";
import { shq } from "../helpers/quote.js";

const fx = makeShellFixture();
after(() => fx.cleanup());
const outside = path.join(fx.base, "outside");
mkdirSync(outside);
writeFileSync(path.join(outside, "hostname"), "secret-host\n");
symlinkSync(outside, path.join(fx.root, "lnk")); // a link an earlier approved command could have made
writeFileSync(path.join(fx.root, "mine"), "#!/bin/sh\necho mine\n");
chmodSync(path.join(fx.root, "mine"), 0o755);

const POLICY = {
  _allowed_commands:
    "git,tar,sed,awk,find,grep,xargs,env,timeout,nice,npm,npx,make,node,python3,perl,ruby,sort,cat,ls,echo,sh,mkdir",
  _denied_commands: "rm",
};

type Caps = { executesCode?: boolean; writesFiles?: boolean; runsWorkspaceCode?: boolean; network?: boolean };
type Row = { line: string; stdin?: string; want: RegExp | Caps };
const rows: Row[] = [];
const refused = (line: string, reason: RegExp, stdin?: string) => rows.push({ line, want: reason, stdin });
const planned = (line: string, caps: Caps = {}) => rows.push({ line, want: caps });

// git: attached -c, unique-prefix long options, clone -u, grep -O, --ext-diff, command keys
refused("git -ccore.pager=sh log", /config key whose value git runs as a command/);
refused("git -c core.pager=sh log", /config key whose value git runs as a command/);
refused("git -c diff.x.command=sh diff", /config key whose value git runs/);
refused("git -c mergetool.x.cmd=sh status", /config key whose value git runs/);
refused("git -c diff.x.textconv=sh log -p", /config key whose value git runs/);
refused("git -c filter.lfs.process=sh status", /config key whose value git runs/);
refused("git -c core.hooksPath=h commit -m x", /config key whose value git runs/);
refused("git -c include.path=x.cfg log", /config key whose value git runs/);
refused("git config --global core.pager sh", /config key whose value git runs/);
refused("git -C sub config core.pager sh", /config key whose value git runs/);
refused("git fetch --upload-pa=sh origin", /runs the program given to `--upload-pack`/);
refused("git fetch --upload-pack=sh origin", /runs the program given to `--upload-pack`/);
refused("git push --receive-pack=sh origin", /runs the program given/);
refused("git clone -u sh https://example.com/r.git", /clone -u/);
refused("git clone -ush https://example.com/r.git", /clone -u/);
refused("git clone ext::sh", /ext::/);
refused("git grep --open-files-in-pager=sh x", /pager program/);
refused("git grep --open x", /pager program/);
refused("git grep -Osh x", /pager program/);
refused("git diff --ext-diff", /external diff program/);
refused("git log -p --ext-d", /external diff program/);
refused("git --config-env=core.pager=X log", /config-env/);
refused("git --exec-path=. status", /exec-path/);
refused("git rebase -x sh main", /runs a command for each commit/);
refused(
  "git rebase --exec=sh main",
  /runs a command for each commit|runs the program given to `--upload-pack`, `--receive-pack` or `--exec`/,
);
refused("git bisect run sh", /runs a command for each/);
refused("git submodule foreach sh", /runs a command for each/);
refused("git filter-branch --tree-filter sh", /by design/);
// git: output options write; REV:PATH and -C/--git-dir/--work-tree are paths
planned("git log --output=log.txt", { writesFiles: true });
planned("git diff --outp=d.txt", { writesFiles: true });
planned("git format-patch -o out HEAD~1", { writesFiles: true });
planned("git archive -o a.tar HEAD", { writesFiles: true });
refused("git log --output=/tmp/x", /outside the workspace/);
refused("git show HEAD:.env", /credential path/);
refused("git show :0:.env", /credential path/);
refused("git cat-file -p HEAD:sub/../.env", /credential path/);
refused("git show HEAD:../outside/hostname", /outside the workspace/);
refused("git -C /etc status", /outside the workspace/);
refused("git -C/etc status", /outside the workspace/);
refused("git --git-dir=/etc log", /outside the workspace/);
refused("git --work-tree=/ status", /outside the workspace/);
refused("git --work-tree / status", /outside the workspace/);
// git: benign
planned("git log -n 5");
planned("git log --oneline -n 20 -- src");
planned("git diff --stat");
planned("git diff --output-indicator-new=+");
planned("git show HEAD:src/a.ts");
planned("git status");
planned("git branch");
planned("git -c user.name=x log");
planned("git commit -m 'x'", { writesFiles: true });
planned("git fetch origin", { network: true, writesFiles: true });

// tar
refused("tar --checkpoint=1 --checkpoint-action=exec=sh -cf a.tar src", /checkpoint/);
refused("tar -xf a.tar --to-command=sh", /to-command/);
refused("tar -I sh -xf a.tar", /use-compress-program/);
refused("tar -Ish -xf a.tar", /use-compress-program/);
refused("tar --use-compress-program=sh -xf a.tar", /use-compress-program/);
refused("tar --use-comp=sh -xf a.tar", /use-compress-program/);
refused("tar --rsh-command=/bin/sh -xf a.tar", /rsh-command|outside the workspace/);
refused("tar --info-script=x.sh -cf a.tar src", /info-script/);
refused("tar -xf host:a.tar", /remote shell/);
refused("tar -cvf/tmp/x src", /outside the workspace/);
refused("tar -C/etc -xf a.tar", /outside the workspace/);
refused("tar -xf a.tar -C ../x", /outside the workspace/);
planned("tar -xzf a.tgz -C build", { writesFiles: true });
planned("tar xzf a.tgz", { writesFiles: true });
planned("tar -czf a.tgz src", { writesFiles: true });
planned("tar -tzf a.tgz");
planned("tar tvf a.tar");

// sed
refused("sed 1e\\ id a.txt", /backslash escape/); // the line itself is refused before the table
refused("sed '1e id' a.txt", /runs a shell command/);
refused("sed 's/a/id/e' a.txt", /runs a shell command/);
refused("sed -e 's/a/b/ge' a.txt", /runs a shell command/);
refused("sed 's/a/b/w /tmp/x' a.txt", /outside the workspace/);
refused("sed 'w /tmp/x' a.txt", /outside the workspace/);
refused("sed 'r /etc/passwd' a.txt", /outside the workspace/);
refused("sed '1R .env' a.txt", /credential path/);
refused("sed -n '1W ../x' a.txt", /outside the workspace/);
planned("sed 's/a/b/w out.txt' a.txt", { writesFiles: true });
planned("sed -i s/a/b/ a.txt", { writesFiles: true });
planned("sed -f script.sed a.txt", { runsWorkspaceCode: true });
planned("sed -n 1,5p a.txt");
planned("sed s/e/E/g a.txt");
planned("sed -n '/w/p' a.txt");
planned("sed -n '/etc/p' a.txt"); // a script, not a path
refused("sed -n 1p /etc/passwd", /outside the workspace/);
planned("grep -rn '/api/' src");
refused("grep -rn x /etc", /outside the workspace/);
refused("grep -e x -- /etc/passwd", /outside the workspace/);
refused("awk '{print > \"/tmp/x\"}' a.txt", /outside the workspace/);
planned("awk '$1 ~ /usr/ {print}' a.txt");

// awk
refused(`awk 'BEGIN{system("id")}'`, /runs shell commands/);
refused(`awk '{print | "sh"}' a.txt`, /runs shell commands/);
refused(`awk 'BEGIN{"id" | getline x}'`, /runs shell commands/);
planned(`awk '{print > "out.txt"}' a.txt`, { writesFiles: true });
planned("awk -f prog.awk a.txt", { runsWorkspaceCode: true });
planned("awk '{print $1}' a.txt");
planned("awk -F: '$1 > 5 {print}' a.txt");

// find
planned("find . -name '*.o' -delete", { writesFiles: true });
planned("find . -fprint out.txt", { writesFiles: true });
refused("find . -fprint /tmp/list", /outside the workspace/);
refused("find . -fls ../list", /outside the workspace/);
refused("find . -delete", /would delete the whole workspace/);
refused("find . -depth -delete", /would delete the whole workspace/);
planned("find . -name '*.ts'");
planned("find src -type f -newer a.txt");

// xargs feeding a program that runs its arguments, from stdin
refused("xargs git", /config key whose value git runs/, "-c core.pager=sh log");
refused("xargs env", /denied/, "rm a.txt");
refused("xargs cat", /credential path/, ".env");
refused("xargs cat", /outside the workspace/, "/etc/passwd");
refused("timeout 5 xargs sed", /runs a shell command/, "1e\tid a.txt");

// inline code and workspace code: planned, never in the read-only tier
planned("node -e 'console.log(1)'", { executesCode: true });
planned("node -p 1", { executesCode: true });
planned("python3 -c 'print(1)'", { executesCode: true });
planned("perl -e 'print 1'", { executesCode: true });
planned("ruby -e 'puts 1'", { executesCode: true });
planned("node scripts/gen.js", { runsWorkspaceCode: true });
planned("python3 -m pytest -q tests", { runsWorkspaceCode: true });
planned("npm test", { runsWorkspaceCode: true, writesFiles: true });
planned("npm run build", { runsWorkspaceCode: true, writesFiles: true });
planned("npm exec tsc", { runsWorkspaceCode: true, writesFiles: true, network: true });
// every install alias fetches, npm's own misspellings too
planned("npm isntall-clean", { runsWorkspaceCode: true, writesFiles: true, network: true });
planned("npm udpate", { runsWorkspaceCode: true, writesFiles: true, network: true });
planned("npx tsc --noEmit", { runsWorkspaceCode: true, writesFiles: true, network: true });
planned("make -j4 test", { runsWorkspaceCode: true });
planned("timeout 60 npm test", { runsWorkspaceCode: true, writesFiles: true });
planned("env node -e 1", { executesCode: true });
planned("node --version");
planned("sort -u a.txt");
planned("sort -o out.txt a.txt", { writesFiles: true });
refused("sort --compress-program=sh a.txt", /compress-program/);

// a symlink made earlier leads an argument out of the root
refused("cat lnk/hostname", /outside the workspace/);
refused("ls lnk", /outside the workspace/);
// the workspace root itself
refused(`rm -rf ${shq(fx.root)}`, /denied|would delete the whole workspace/);

const CAPS = ["executesCode", "writesFiles", "runsWorkspaceCode", "network"] as const;

async function verdict(line: string, settings: Record<string, string>, stdin?: string) {
  try {
    return await fx.plan({ command: line, stdin }, settings);
  } catch (err) {
    if (err instanceof Refusal) return err;
    throw err;
  }
}

describe("program tables: attack forms and benign forms", () => {
  test("every rule's match / not_match examples hold (checked at load too)", () => {
    assert.deepEqual(checkExamples(), []);
    assert.ok(TABLES.length >= 15);
    for (const t of TABLES) for (const r of t.rules) assert.ok(r.match.length > 0, `${t.names[0]}: ${r.why}`);
  });
  test("every program the wrapper table or the runner lists name has a program table", () => {
    for (const n of [...WRAPPER_NAMES, ...SHELLS, ...UNMODELLED_RUNNERS, ...AS_OTHER_USER])
      assert.ok(tableFor(n), `${n} has no program table`);
    for (const n of [...UNMODELLED_RUNNERS, ...AS_OTHER_USER])
      assert.equal(tableFor(n)!.base?.[0]?.effect, "exec", `${n} runs commands latch does not check`);
    assert.equal(tableFor("find")!.names.includes("find"), true, "find keeps its own table");
    assert.equal(tableFor("env")!.rules.length, 0, "an unwrapped wrapper has no capability of its own");
  });
  test("a table that contradicts an example is caught", () => {
    const git = TABLES.find((t) => t.names.includes("git"))!;
    const broken = { ...git, rules: [{ ...git.rules[0], not_match: ["git -c core.pager=x log"] }] };
    assert.match(checkExamples([broken]).join("\n"), /should not fire/);
  });
  test("the wrapper table's examples hold, and a contradicting one is caught", () => {
    assert.deepEqual(checkWrapperExamples(), []);
    for (const n of WRAPPER_NAMES.filter((n) => !SHELLS.has(n) || n === "sh" || n === "bash"))
      assert.ok(
        WRAPPER_EXAMPLES.some((e) => e.line.split(" ")[0] === n),
        `${n} has no example in WRAPPER_EXAMPLES`,
      );
    const wrong = [
      { line: "env -S 'ls -l'", inner: "ls -l" },
      { line: "timeout 5 npm test", inner: "5 npm test" },
      { line: "sh -c 'ls'", script: "pwd" },
    ];
    assert.deepEqual(checkWrapperExamples(wrong), [
      "`env -S 'ls -l'` is refused: `env -S` splits a string into a command line, which latch cannot check word by word",
      "`timeout 5 npm test` should run `5 npm test`",
      "`sh -c 'ls'` should run the script `pwd`",
    ]);
  });
  for (const row of rows) {
    test(`${row.want instanceof RegExp ? "refused" : "planned"}: ${row.line}${row.stdin ? ` (stdin: ${JSON.stringify(row.stdin)})` : ""}`, async () => {
      const got = await verdict(row.line, POLICY, row.stdin);
      if (row.want instanceof RegExp) {
        assert.ok(
          got instanceof Refusal,
          `expected a refusal, got a plan: ${JSON.stringify((got as { capabilities?: unknown }).capabilities)}`,
        );
        assert.match(got.reason, row.want);
        return;
      }
      assert.ok(!(got instanceof Refusal), `refused: ${got instanceof Refusal ? got.reason : ""}`);
      const want = row.want;
      for (const mode of [POLICY, {}]) {
        const plan: ShellPlan = mode === POLICY ? got : await fx.plan({ command: row.line }, mode);
        for (const c of CAPS)
          assert.equal(plan.capabilities[c], want[c] === true, `${c} (${JSON.stringify(plan.capabilities.why)})`);
        for (const s of plan.steps)
          for (const c of CAPS) if (s.capabilities[c]) assert.equal(plan.capabilities[c], true);
      }
    });
  }
  test("attacks are refused with no shell policy too, where a fixed rule refuses them", async () => {
    for (const line of [
      "cat lnk/hostname",
      "git show HEAD:.env",
      "tar -cvf/tmp/x src",
      "find . -delete",
      "git -C/etc status",
    ]) {
      const got = await verdict(line, {});
      assert.ok(got instanceof Refusal, line);
    }
  });
  test("a workspace executable named like a program is known by its path, not its name", async () => {
    const plan = await fx.plan("./mine", {});
    assert.equal(plan.programs[0].name, path.join(fx.root, "mine"));
    assert.equal(plan.capabilities.runsWorkspaceCode, true);
    const ls = await fx.plan("ls", {});
    assert.equal(ls.programs[0].name, "ls");
    const byPath = await fx.plan(shq(`${fx.bin}/ls`), {});
    assert.equal(byPath.programs[0].name, "ls", "the PATH's own ls by its absolute path is still ls");
  });
});
