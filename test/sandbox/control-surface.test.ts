// What the user's next `git status` / `git commit` (or editor, or shell) runs must not be the model's
// choice. A contained workspace-write process (auto_edit runs `node` so, with no question) tries each
// way to rewire it: `.git/commondir` to a config of its own, renaming `.git` and building a new one,
// `git init sub` with `core.hooksPath`, and writes to every "runs later" file. Each attack is first
// shown to work without latch; then, through the host, real git runs afterwards, uncontained, and the
// attack's marker must not appear; the result and the policy log name what was refused or undone.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { RUNS_LATER } from "../../src/fs/protected.js";
import type { Host } from "../../src/host/create-host.js";
import { waitFor } from "../helpers/wait.js";
import {
  decisions,
  initRepo,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  type SandboxFixture,
} from "./sandbox-fixture.js";

type Out = { status: string; reason?: string; message?: string; result?: Record<string, any> };
type Undone = { path: string; what: string };

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

function repo(): { fx: SandboxFixture; marker: string } {
  const fx = makeSandboxFixture("latch-sbx-git-");
  fixtures.push(fx);
  initRepo(fx);
  return { fx, marker: path.join(fx.outside, "MARKER") };
}

/** A repository with two commits, for a rebase of the last one to stop in. */
function twoCommits(): { fx: SandboxFixture; marker: string } {
  const r = repo();
  r.fx.write("b.txt", "two\n");
  r.fx.git("add", "b.txt");
  r.fx.git("commit", "-q", "-m", "two");
  return r;
}

/** The user's own git, afterwards, outside any sandbox: whatever it runs, it runs for real. */
function userGit(fx: SandboxFixture, cwd: string, ...args: string[]): void {
  const env = {
    ...process.env,
    HOME: fx.home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "u",
    GIT_COMMITTER_NAME: "u",
  };
  try {
    execFileSync("git", args, { cwd, env, stdio: "ignore" });
  } catch {
    // a failing git still ran what it was told to: the marker tells
  }
}

function userRunsGit(fx: SandboxFixture, cwd = fx.root): void {
  userGit(fx, cwd, "status");
  userGit(fx, cwd, "-c", "user.email=u@example.com", "commit", "-q", "--allow-empty", "-m", "user's commit");
}

/** The policy log's effect_outcome records of a host, in order. */
function outcomes(host: Host): Record<string, any>[] {
  return readFileSync(host.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_outcome");
}

/** Where the model's common git folder goes (a config with core.fsmonitor): `.git/commondir` names it. */
const evilAt = (fx: SandboxFixture) => path.join(fx.root, "build/cache");

/** Script lines that make it, its fsmonitor touching `marker`. */
function evilCommonDir(fx: SandboxFixture, marker: string): string[] {
  const at = JSON.stringify(evilAt(fx));
  return [
    `fs.mkdirSync(${at} + "/objects", { recursive: true }); fs.mkdirSync(${at} + "/refs");`,
    `fs.writeFileSync(${at} + "/config", "[core]\\n\\tfsmonitor = touch ${marker}\\n");`,
  ];
}

/** `node -e js` started in the background in session "bg"; its start, checked to be ok. */
async function startBackground(host: Host, js: string): Promise<Out> {
  const start = (await host.call(
    "local_shell",
    { command: "node", args: ["-e", js], background: true },
    { session: "bg" },
  )) as Out;
  assert.equal(start.status, "ok", JSON.stringify(start));
  return start;
}

/** A `node -e` script run in the workspace; `sh` lines through child_process (git is a real program inside too). */
function script(lines: string[]): string {
  return [`const fs = require("fs"); const cp = require("child_process");`, ...lines].join("\n");
}

async function runContained(fx: SandboxFixture, js: string): Promise<{ host: Host; out: Out }> {
  // auto_edit runs `node` contained with a writable workspace and asks no one: a denying approver proves it.
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  assert.equal(out.result!.mode, "workspace-write");
  return { host, out };
}

function runUncontained(fx: SandboxFixture, js: string): void {
  try {
    execFileSync(process.execPath, ["-e", js], { cwd: fx.root, stdio: "ignore" });
  } catch {
    // part of an attack may fail; what it left is what counts
  }
}

const undonePaths = (out: Out) => ((out.result!.undone ?? []) as Undone[]).map((u) => u.path).sort();

describe("git's control surface and what runs later, from a contained process", () => {
  const attacks: Record<string, (marker: string, root: string) => string> = {
    // git reads objects, refs and config from where commondir points; .git/config stays byte-identical.
    commondir: (marker, root) =>
      script([
        `fs.mkdirSync("build/cache/objects", { recursive: true }); fs.rmdirSync("build/cache/objects");`,
        `fs.symlinkSync(${JSON.stringify(root + "/.git/objects")}, "build/cache/objects");`,
        `fs.symlinkSync(${JSON.stringify(root + "/.git/refs")}, "build/cache/refs");`,
        `fs.writeFileSync("build/cache/config", "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch ${marker}\\n");`,
        `fs.writeFileSync(".git/commondir", ${JSON.stringify(root + "/build/cache")} + "\\n");`,
      ]),
    // Move the real one aside and build a new .git whose config runs the marker.
    "renamed .git": (marker) =>
      script([
        `fs.renameSync(".git", ".git-old");`,
        `fs.mkdirSync(".git"); fs.symlinkSync("../.git-old/objects", ".git/objects"); fs.symlinkSync("../.git-old/refs", ".git/refs");`,
        `fs.copyFileSync(".git-old/HEAD", ".git/HEAD");`,
        `fs.writeFileSync(".git/config", "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch ${marker}\\n");`,
      ]),
    // A repository made during the call, pointed at hooks of the model's and an fsmonitor.
    "git init sub with core.hooksPath": (marker, root) =>
      script([
        `cp.execFileSync("git", ["init", "-q", "sub"]);`,
        `fs.mkdirSync("tools/hooks", { recursive: true });`,
        `fs.writeFileSync("tools/hooks/pre-commit", "#!/bin/sh\\ntouch ${marker}\\n", { mode: 0o755 });`,
        `cp.execFileSync("git", ["-C", "sub", "config", "core.hooksPath", ${JSON.stringify(root + "/tools/hooks")}]);`,
        `cp.execFileSync("git", ["-C", "sub", "config", "core.fsmonitor", "touch ${marker}"]);`,
      ]),
  };
  const userCwd: Record<string, string> = { "git init sub with core.hooksPath": "sub" };

  for (const [name, attack] of Object.entries(attacks)) {
    test(`${name}: works without latch; contained, the user's next git runs nothing of it`, async () => {
      await requireSandbox();
      const plain = repo();
      runUncontained(plain.fx, attack(plain.marker, plain.fx.root));
      userRunsGit(plain.fx, path.join(plain.fx.root, userCwd[name] ?? ""));
      assert.ok(existsSync(plain.marker), `the ${name} attack must work without latch, or this test proves nothing`);

      const { fx, marker } = repo();
      const gitIno = lstatSync(path.join(fx.root, ".git")).ino;
      const configBefore = readFileSync(path.join(fx.root, ".git/config"));
      const { host, out } = await runContained(fx, attack(marker, fx.root));
      userRunsGit(fx, path.join(fx.root, userCwd[name] ?? ""));
      assert.equal(existsSync(marker), false, `${name}: the user's git ran the attack's command`);
      assert.equal(lstatSync(path.join(fx.root, ".git")).ino, gitIno, ".git is the same folder");
      assert.deepEqual(readFileSync(path.join(fx.root, ".git/config")), configBefore);
      assert.deepEqual(markedProcesses(), []);
      const last = outcomes(host).at(-1)!;
      if (name === "renamed .git") {
        // Refused inside: .git is a mount point of its own (EBUSY), so nothing was there to undo.
        assert.match(String(out.result!.stderr), /EBUSY/);
        assert.equal(existsSync(path.join(fx.root, ".git-old")), false);
        assert.equal(out.result!.undone, undefined);
      } else {
        const expected = name === "commondir" ? [".git/commondir"] : ["sub/.git/config"];
        assert.deepEqual(undonePaths(out), expected, JSON.stringify(out.result));
        assert.deepEqual((last.undone as Undone[]).map((u) => u.path).sort(), expected);
        assert.match(String(out.result!.undone_note), /ask the user to make them; do not make them again/);
      }
      if (name === "git init sub with core.hooksPath") {
        // The new repository is kept, minus what would run code.
        const cfg = readFileSync(path.join(fx.root, "sub/.git/config"), "utf8");
        assert.doesNotMatch(cfg, /hooksPath|fsmonitor/i);
        assert.match(cfg, /repositoryformatversion/);
      }
      assert.equal(decisions(host).at(-1)!.final, "allow");
    });
  }

  test("every runs-later file and git control entry: existing ones refused, new ones undone", async () => {
    await requireSandbox();
    const { fx } = repo();
    const existing = [".vscode/settings.json", ".envrc", ".bashrc"];
    for (const rel of existing) fx.write(rel, `original ${rel}\n`);
    // One file at or under each RUNS_LATER entry not there yet, and git's control entries that are not.
    const folders = new Set([".vscode", ".idea", ".husky", ".devcontainer", ".claude"]);
    // (`.git/hooks` is in RUNS_LATER too: a git folder's own entries are tried below.)
    const newNames = RUNS_LATER.filter((n) => !n.startsWith(".git/") && !existing.some((e) => e.split("/")[0] === n));
    const targets = [
      ...existing,
      ...newNames.map((n) => (folders.has(n) ? `${n}/x` : n)),
      ".git/config.worktree",
      ".git/worktrees/evil/gitdir",
      ".git/modules/evil/HEAD",
      ".git/modules/evil/config",
      "nested/.git",
      ".git/hooks/pre-commit",
      ".git/config",
      ".git/info/attributes",
    ];
    const js = script([
      `for (const t of ${JSON.stringify(targets)}) {`,
      `  try { fs.mkdirSync(require("path").dirname(t), { recursive: true }); fs.appendFileSync(t, "[core]\\n\\tfsmonitor = evil\\n"); console.log(t, "WRITTEN"); }`,
      `  catch (e) { console.log(t, "refused", e.code); }`,
      `}`,
    ]);
    const configBefore = readFileSync(path.join(fx.root, ".git/config"));
    const { host, out } = await runContained(fx, js);
    const stdout = String(out.result!.stdout);
    for (const rel of [...existing, ".git/hooks/pre-commit", ".git/config", ".git/info/attributes"]) {
      assert.match(stdout, new RegExp(`^${rel.replace(/\./g, "\\.")} refused EROFS$`, "m"), stdout);
    }
    for (const rel of existing) assert.equal(readFileSync(path.join(fx.root, rel), "utf8"), `original ${rel}\n`);
    assert.deepEqual(readFileSync(path.join(fx.root, ".git/config")), configBefore);
    assert.equal(existsSync(path.join(fx.root, ".git/hooks/pre-commit")), false);
    // What was made is gone, and named in the result and the log.
    const made = [...newNames, ".git/config.worktree", ".git/worktrees", "nested/.git"];
    for (const rel of made) assert.equal(existsSync(path.join(fx.root, rel)), false, `${rel} is still there`);
    // A git folder made under modules/ (it has a HEAD) is kept, its config without what runs programs.
    assert.equal(readFileSync(path.join(fx.root, ".git/modules/evil/config"), "utf8"), "[core]\n");
    const expected = [...made, ".git/modules/evil/config"].sort();
    assert.deepEqual(undonePaths(out), expected);
    assert.deepEqual((outcomes(host).at(-1)!.undone as Undone[]).map((u) => u.path).sort(), expected);
    // `.git/worktrees` and `.git/modules` undone: the model is told the git command that made them must
    // run outside (review g6: `git worktree add` exited 0 and its entry was gone, unexplained).
    assert.match(
      String(out.result!.undone_note),
      /`git worktree add` and `git submodule add`\/`update` .* ask the user to run them/,
    );
  });

  test("a write the box keeps read-only fails, and the result says what is kept read-only and why", async () => {
    await requireSandbox();
    const { fx } = repo();
    fx.write(".envrc", "original\n");
    const configBefore = readFileSync(path.join(fx.root, ".git/config"));
    for (const target of [".git/config", ".envrc"]) {
      const { out } = await runContained(
        fx,
        script([`fs.appendFileSync(${JSON.stringify(target)}, "[core]\\n\\tfsmonitor = evil\\n");`]),
      );
      assert.notEqual(out.result!.exit_code, 0, target);
      assert.match(String(out.result!.stderr), /EROFS: read-only file system/, target);
      const note = String(out.result!.sandbox_note);
      assert.match(
        note,
        /read-only here: in each git folder `config`, `config\.worktree`, `commondir`, `hooks`/,
        target,
      );
      assert.match(note, /`\.envrc`/);
      assert.match(note, /ask the user to run the command outside the sandbox/);
      assert.doesNotMatch(note, /mount point/, "not the rename note: nothing was renamed");
    }
    assert.deepEqual(readFileSync(path.join(fx.root, ".git/config")), configBefore);
    assert.equal(readFileSync(path.join(fx.root, ".envrc"), "utf8"), "original\n");
    // A run that fails otherwise, or writes where it may, carries no note.
    for (const js of ["process.exit(3)", script([`fs.writeFileSync("ok.txt", "x");`])]) {
      const { out } = await runContained(fx, js);
      assert.equal(out.result!.sandbox_note, undefined, js);
    }
  });

  test("a rebase left stopped: exec lines it added are commented out, the user's own stay", async () => {
    await requireSandbox();
    // Two commits to rebase over; the model's rebase stops at once (`break`), with an exec line after.
    const setUp = twoCommits;
    const attack = (marker: string) =>
      script([
        `cp.execFileSync("git", ["rebase", "-q", "-i", "--exec", "touch ${marker}", "HEAD~1"], {`,
        `  env: { ...process.env, GIT_SEQUENCE_EDITOR: "sed -i 1ibreak" }, stdio: "inherit" });`,
      ]);
    const continues = (fx: SandboxFixture) => userGit(fx, fx.root, "-c", "core.editor=true", "rebase", "--continue");
    const plain = setUp();
    runUncontained(plain.fx, attack(plain.marker));
    continues(plain.fx);
    assert.ok(existsSync(plain.marker), "the exec line must run without latch, or this test proves nothing");

    const { fx, marker } = setUp();
    const { host, out } = await runContained(fx, attack(marker));
    assert.deepEqual(undonePaths(out), [".git/rebase-merge/git-rebase-todo"], JSON.stringify(out.result));
    assert.match(String((out.result!.undone as Undone[])[0].what), /1 exec line .* commented out/);
    assert.deepEqual(
      (outcomes(host).at(-1)!.undone as Undone[]).map((u) => u.path),
      [".git/rebase-merge/git-rebase-todo"],
    );
    const todo = readFileSync(path.join(fx.root, ".git/rebase-merge/git-rebase-todo"), "utf8");
    assert.match(todo, /^# \(latch\) exec touch /m);
    assert.match(todo, /^pick /m, "the rest of the rebase is as it was");
    continues(fx);
    assert.equal(existsSync(marker), false, "the user's git rebase --continue ran the model's exec line");
    assert.equal(existsSync(path.join(fx.root, ".git/rebase-merge")), false, "the rebase finished");

    // The user's own stopped rebase with an exec line: a call leaves it alone.
    const own = setUp();
    runUncontained(own.fx, attack(own.marker));
    const before = readFileSync(path.join(own.fx.root, ".git/rebase-merge/git-rebase-todo"));
    const second = await runContained(own.fx, script([`cp.execFileSync("git", ["status", "--short"]);`]));
    assert.equal(second.out.result!.undone, undefined, JSON.stringify(second.out.result));
    assert.deepEqual(readFileSync(path.join(own.fx.root, ".git/rebase-merge/git-rebase-todo")), before);
  });

  test("a stopped rebase's state made a link, a FIFO or too large to read is removed: git would follow it", async () => {
    // Review g15: the guard reads the state through descriptors and never follows a link, git does: a
    // `rebase-merge` or a todo linked into the workspace was "NOT checked" and left, and a todo made a
    // FIFO (a background loop feeding it) read as no rebase at all; the exec line ran at `--continue`.
    await requireSandbox();
    const setUp = twoCommits;
    const todo = ".git/rebase-merge/git-rebase-todo";
    const ways: Record<string, { sh: (exec: string) => string; removed: string }> = {
      "the state's folder a link": {
        sh: (exec) =>
          `mkdir -p x && mv .git/rebase-merge x/rm && ln -s ../x/rm .git/rebase-merge && echo '${exec}' >> x/rm/git-rebase-todo`,
        removed: ".git/rebase-merge",
      },
      "the todo a link": {
        sh: (exec) =>
          `mkdir -p x && cp ${todo} x/todo && echo '${exec}' >> x/todo && rm ${todo} && ln -s ../../x/todo ${todo}`,
        removed: todo,
      },
      "the todo a FIFO": { sh: () => `rm ${todo} && mkfifo ${todo}`, removed: todo },
      // Review g43: past V8's longest string the look threw, said NOT checked and left it; git reads to a NUL.
      "the todo 600 MB (sparse)": {
        sh: (exec) => `sed -i '1i${exec}' ${todo} && truncate -s 600M ${todo}`,
        removed: todo,
      },
    };
    const attack = (sh: string) =>
      script([
        `cp.execSync(${JSON.stringify(`git rebase -q -i HEAD~1 && ${sh}`)}, {`,
        `  env: { ...process.env, GIT_SEQUENCE_EDITOR: "sed -i 1ibreak" }, stdio: "inherit", shell: "/bin/sh" });`,
      ]);
    const continues = (fx: SandboxFixture) => userGit(fx, fx.root, "-c", "core.editor=true", "rebase", "--continue");
    for (const [way, { sh, removed }] of Object.entries(ways)) {
      const fifo = way.includes("FIFO");
      if (!fifo) {
        // (A FIFO nobody feeds holds the user's git at its open: shown by review g15 with a feeding loop.)
        const plain = setUp();
        runUncontained(plain.fx, attack(sh(`exec touch ${plain.marker}`)));
        continues(plain.fx);
        assert.ok(existsSync(plain.marker), `${way}: git must follow it without latch, or this proves nothing`);
      }
      const { fx, marker } = setUp();
      const { host, out } = await runContained(fx, attack(sh(`exec touch ${marker}`)));
      const undone = (out.result!.undone ?? []) as Undone[];
      const entry = undone.find((u) => u.path === removed);
      assert.ok(entry, `${way}: ${JSON.stringify(undone)}`);
      assert.match(entry.what, /^removed: .* where git's own never is/, way);
      assert.ok(
        (outcomes(host).at(-1)!.undone as Undone[]).some((u) => u.path === removed),
        `${way}: the log says what was removed`,
      );
      assert.equal(lstatSync(path.join(fx.root, removed), { throwIfNoEntry: false }), undefined, `${way}: still there`);
      if (way.includes("a link"))
        assert.ok(existsSync(path.join(fx.root, "x/")), `${way}: what the link led to in the workspace stays`);
      continues(fx);
      assert.equal(existsSync(marker), false, `${way}: the user's git rebase --continue ran the model's exec line`);
    }
  });

  test("a stopped git am's apply options that write elsewhere are removed; the user's stay", async () => {
    // Review g16: `rebase-apply/apply-opt` goes to `git apply` at the user's `git am --continue`, and
    // `--build-fake-ancestor=PATH` writes an index file at PATH, outside the box (~/.bashrc, say).
    await requireSandbox();
    const amStopped = (opts: string) =>
      [
        `set -e; g="git -c user.name=m -c user.email=m@e"; $g checkout -qb side; echo side > a.txt; $g commit -qam s1`,
        `echo n > n.txt; git add n.txt; $g commit -qm s2; git format-patch -q -2 -o pp; $g checkout -q -`,
        `echo main > a.txt; $g commit -qam m1; $g am pp/*.patch >/dev/null 2>&1 || true`,
        `echo ${JSON.stringify(opts)} > .git/rebase-apply/apply-opt; echo resolved > a.txt; git add a.txt; rm -rf pp`,
      ].join("; ");
    const sh = (line: string) =>
      script([`cp.execSync(${JSON.stringify(line)}, { stdio: "inherit", shell: "/bin/sh" });`]);
    const continues = (fx: SandboxFixture) => userGit(fx, fx.root, "-c", "user.email=u@x", "am", "--continue");
    const plain = repo();
    runUncontained(plain.fx, sh(amStopped(`'--build-fake-ancestor=${plain.marker}'`)));
    continues(plain.fx);
    assert.ok(existsSync(plain.marker), "git must write there without latch, or this test proves nothing");

    const { fx, marker } = repo();
    const { out } = await runContained(fx, sh(amStopped(`'--build-fake-ancestor=${marker}'`)));
    assert.deepEqual(undonePaths(out), [".git/rebase-apply/apply-opt"], JSON.stringify(out.result));
    assert.match(String((out.result!.undone as Undone[])[0].what), /^removed: `git apply` options/);
    continues(fx);
    assert.equal(existsSync(marker), false, "the user's git am --continue wrote where the model's option said");
    assert.match(fx.git("log", "-1", "--format=%s"), /s2/, "the am went on without it");

    // Options that only change how a patch applies, the call's or the user's, stay.
    const kept = repo();
    const second = await runContained(kept.fx, sh(amStopped(`'--whitespace=fix' '-p1' '-C1'`)));
    assert.equal(second.out.result!.undone, undefined, JSON.stringify(second.out.result));
  });

  test("a stopped rebase's or cherry-pick's merge strategy made a program of the model's is dropped", async () => {
    // Review g10: a strategy git has not built in runs as `git-merge-NAME`, a NAME with a slash as a
    // path in the worktree; `rebase-merge/strategy` and `sequencer/opts` are writable in the box.
    await requireSandbox();
    const user = (fx: SandboxFixture, ...a: string[]) => userGit(fx, fx.root, "-c", "core.editor=true", ...a);
    const setUp = (how: "rebase" | "cherry-pick") => {
      const r = repo();
      const g = (...a: string[]) => r.fx.git(...a);
      g("checkout", "-q", "-b", "feat");
      r.fx.write("a.txt", "feat\n");
      g("commit", "-q", "-am", "X");
      r.fx.write("b.txt", "b\n");
      g("add", "b.txt");
      g("commit", "-q", "-m", "B");
      g("checkout", "-q", "-");
      r.fx.write("a.txt", "main\n");
      g("commit", "-q", "-am", "Y");
      // The user's own, stopped: a rebase at a `break`, a cherry-pick at a conflict.
      if (how === "rebase")
        execFileSync("git", ["rebase", "-q", "-i", "HEAD", "feat"], {
          cwd: r.fx.root,
          env: { ...process.env, HOME: r.fx.home, GIT_SEQUENCE_EDITOR: "sed -i 1ibreak" },
          stdio: "ignore",
        });
      else userGit(r.fx, r.fx.root, "cherry-pick", "feat~1", "feat");
      return r;
    };
    // How the strategy is written: cherry-pick's options as git's config parser takes them too, a key on
    // the header's line and a `\r` before a key (review g11).
    type How = "rebase" | "cherry-pick";
    const spellings: Record<string, string> = {
      rebase: `fs.writeFileSync(".git/rebase-merge/strategy", "a/b\\n");`,
      "cherry-pick": `fs.appendFileSync(".git/sequencer/opts", "[options]\\n\\tstrategy = a/b\\n");`,
      "cherry-pick, on the header's line": `fs.appendFileSync(".git/sequencer/opts", "[options] strategy = a/b\\n");`,
      "cherry-pick, a carriage return first": `fs.appendFileSync(".git/sequencer/opts", "[options]\\n\\rstrategy = a/b\\n");`,
      // Review g12: a subsection holding `]`, then a comment ending in a backslash.
      "cherry-pick, behind a bracket in a subsection": `fs.appendFileSync(".git/sequencer/opts", '[x "]"] # \\\\\\n[options]\\nstrategy = a/b\\n');`,
    };
    const attack = (marker: string, spelling: string) =>
      script([
        spellings[spelling],
        `fs.mkdirSync("git-merge-a"); fs.writeFileSync("git-merge-a/b", "#!/bin/sh\\ntouch ${marker}\\nexit 1\\n", { mode: 0o755 });`,
      ]);
    const finish = (fx: SandboxFixture, how: "rebase" | "cherry-pick") => {
      if (how === "cherry-pick") {
        fx.write("a.txt", "resolved\n");
        userGit(fx, fx.root, "add", "a.txt");
      }
      user(fx, how, "--continue");
    };
    for (const spelling of Object.keys(spellings)) {
      const how: How = spelling === "rebase" ? "rebase" : "cherry-pick";
      const plain = setUp(how);
      runUncontained(plain.fx, attack(plain.marker, spelling));
      finish(plain.fx, how);
      assert.ok(
        existsSync(plain.marker),
        `${spelling}: the strategy must run without latch, or this test proves nothing`,
      );

      const { fx, marker } = setUp(how);
      const { out } = await runContained(fx, attack(marker, spelling));
      const file = how === "rebase" ? ".git/rebase-merge/strategy" : ".git/sequencer/opts";
      assert.deepEqual(undonePaths(out), [file], JSON.stringify(out.result));
      assert.match(String((out.result!.undone as Undone[])[0].what), /a merge strategy git has not built in/);
      finish(fx, how);
      assert.equal(existsSync(marker), false, `${spelling}: the user's --continue ran the model's strategy`);
    }
  });

  test("approved git add and git commit still work in a writable workspace; nothing is undone", async () => {
    await requireSandbox();
    const { fx, marker } = repo();
    fx.write("b.txt", "new file\n");
    const host = await fx.host({ envelope: "auto_edit" });
    const add = (await host.call("local_shell", { command: "git add b.txt" })) as Out;
    assert.equal(add.status, "ok", JSON.stringify(add));
    assert.equal(add.result!.mode, "workspace-write");
    assert.equal(add.result!.exit_code, 0, String(add.result!.stderr));
    const commit = (await host.call("local_shell", {
      command: "git -c user.email=t@example.com -c user.name=t commit -q -m two",
    })) as Out;
    assert.equal(commit.status, "ok", JSON.stringify(commit));
    assert.equal(commit.result!.contained, true);
    assert.equal(commit.result!.exit_code, 0, String(commit.result!.stderr));
    assert.equal(commit.result!.undone, undefined);
    assert.match(fx.git("log", "--format=%s"), /^two\none\n$/);
    assert.equal(fx.git("status", "--porcelain"), "");
    assert.equal(existsSync(marker), false);
  });

  test("a background process writing after its call returned is undone with no call of the model's", async () => {
    // Review g1: between the model's calls nothing looked, and an editor runs `git status` on its own
    // every few seconds: a `.git/commondir` naming a config with core.fsmonitor, made 300 ms after its
    // call, stayed until the model's next process_output. Now the root's git folder is watched while
    // the process runs (sandbox/guard-watch.ts).
    await requireSandbox();
    const { fx, marker } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const js = script([
      ...evilCommonDir(fx, marker),
      `setTimeout(() => { fs.writeFileSync(".git/commondir", ${JSON.stringify(evilAt(fx))} + "\\n"); fs.writeFileSync("wrote", ""); }, 300);`,
      `setTimeout(() => {}, 60000);`,
    ]);
    const start = await startBackground(host, js);
    const id = String(start.result!.id);
    assert.ok(await waitFor(async () => existsSync(path.join(fx.root, "wrote"))), "the process wrote");
    assert.ok(
      await waitFor(async () => !existsSync(path.join(fx.root, ".git/commondir"))),
      "undone while the model makes no call",
    );
    userRunsGit(fx);
    assert.equal(existsSync(marker), false, "the user's git ran nothing of the model's");
    const out = (await host.call("process_output", { id }, { session: "bg" })) as Out;
    assert.deepEqual(
      ((out.result!.undone ?? []) as Undone[]).map((u) => u.path),
      [".git/commondir"],
      "reported at the next read, once",
    );
    assert.ok(outcomes(host).some((o) => (o.undone as Undone[] | undefined)?.[0]?.path === ".git/commondir"));
    await host.call("process_kill", { id }, { session: "bg" });
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
  });

  test("a background process that makes again what was undone is stopped", async () => {
    // Review g3: a loop making `.git/commondir` again at once kept it there at 15 of 20 git commands.
    await requireSandbox();
    const { fx, marker } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const js = script([
      ...evilCommonDir(fx, marker),
      `setInterval(() => { if (!fs.existsSync(".git/commondir")) fs.writeFileSync(".git/commondir", ${JSON.stringify(evilAt(fx))} + "\\n"); }, 10);`,
    ]);
    const id = String((await startBackground(host, js)).result!.id);
    const read = async () => (await host.call("process_output", { id }, { session: "bg" })) as Out;
    const undone: Undone[] = [];
    let last: Out | undefined;
    assert.ok(
      await waitFor(async () => {
        last = await read();
        undone.push(...((last.result!.undone ?? []) as Undone[]));
        return last.result!.running === false;
      }),
      `stopped by latch: ${JSON.stringify(last)}`,
    );
    assert.ok(
      undone.some((u) => /stopped the process/.test(u.what)),
      JSON.stringify(undone),
    );
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
    assert.equal(existsSync(path.join(fx.root, ".git/commondir")), false);
    userRunsGit(fx);
    assert.equal(existsSync(marker), false);
  });

  test("attack: a background process the guard's check cannot look at is stopped at once (g43)", async () => {
    // Review g43: a check that could not look said NOT checked, which was no strike, so a process that
    // kept it failing ran on with every check failing open. An index latch cannot read is one such.
    await requireSandbox();
    const { fx } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const js = script([
      `fs.mkdirSync("junk/.git", { recursive: true }); fs.writeFileSync("junk/.git/index", "XXXXXXXXXXXXXXXX");`,
      `setInterval(() => fs.writeFileSync("alive", String(Date.now())), 100);`,
    ]);
    const id = String((await startBackground(host, js)).result!.id);
    const undone: Undone[] = [];
    let last: Out | undefined;
    assert.ok(
      await waitFor(async () => {
        last = (await host.call("process_output", { id }, { session: "bg" })) as Out;
        undone.push(...((last.result!.undone ?? []) as Undone[]));
        return last.result!.running === false;
      }),
      `stopped by latch: ${JSON.stringify(last)}`,
    );
    assert.ok(
      undone.some((u) => /NOT checked .*cannot read the git index/.test(u.what)),
      JSON.stringify(undone),
    );
    assert.ok(
      undone.some((u) => /^stopped the process: latch could not check what it changed/.test(u.what)),
      JSON.stringify(undone),
    );
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
  });

  /**
   * A background process that makes `.git/commondir` again at each round's `go`; each round waits for
   * its own check to undo it, then calls `between` (what the model does meanwhile). It must be stopped
   * within `rounds`, and the user's git run nothing of it.
   */
  async function rearmedRounds(rounds: number, between: (host: Host) => Promise<Out | undefined>): Promise<void> {
    await requireSandbox();
    const { fx, marker } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const js = script([
      ...evilCommonDir(fx, marker),
      `setInterval(() => { if (fs.existsSync("go") && !fs.existsSync(".git/commondir")) { fs.writeFileSync(".git/commondir", ${JSON.stringify(evilAt(fx))} + "\\n"); fs.unlinkSync("go"); } }, 10);`,
    ]);
    const id = String((await startBackground(host, js)).result!.id);
    const undone: Undone[] = [];
    let running: unknown = true;
    for (let round = 0; round < rounds && running !== false; round++) {
      writeFileSync(path.join(fx.root, "go"), "");
      // Re-armed, then undone by the process's own check; or not, once latch has stopped it.
      const undoneAgain = () =>
        !existsSync(path.join(fx.root, "go")) && !existsSync(path.join(fx.root, ".git/commondir"));
      const stopped = await waitFor(undoneAgain, 5_000).then((again) => !again);
      // What is undone is said once, to whichever call of the session comes first.
      const meanwhile = await between(host);
      const out = (await host.call("process_output", { id }, { session: "bg" })) as Out;
      for (const r of [meanwhile, out]) undone.push(...((r?.result?.undone ?? []) as Undone[]));
      running = out.result!.running;
      assert.ok(!stopped || running === false, `round ${round}: neither re-armed and undone, nor stopped`);
    }
    assert.equal(running, false, `stopped by latch: ${JSON.stringify(undone)}`);
    assert.ok(
      undone.some((u) => /stopped the process: latch undid this 3 times or more/.test(u.what)),
      JSON.stringify(undone),
    );
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
    userRunsGit(fx);
    assert.equal(existsSync(marker), false);
  }

  test("attack: a model polling process_list does not keep a re-arming background process going", async () => {
    // Review g34: process_list is a contained call with a guard, and each one counted as a foreground
    // start, which may make things again: a poll between each two undos wiped the process's count, and
    // a loop re-arming a repository ran on for good. Only calls that start processes count now: it is
    // stopped at the third undo, before the six-in-a-minute rule below would.
    await rearmedRounds(5, async (host) => (await host.call("process_list", {}, { session: "bg" })) as Out);
  });

  test("attack: foreground calls between each undo do not keep a re-arming background process going", async () => {
    // Review g36: each call that starts a process may make what was undone again, so it reset the
    // process's count; a model running `true` between undos kept a loop re-arming a repository going.
    // Six undos of one path within a minute stop it whatever started between.
    await rearmedRounds(9, async (host) => {
      const fg = (await host.call("local_shell", { command: "true" })) as Out;
      assert.equal(fg.status, "ok", JSON.stringify(fg));
      return undefined; // its session is not the process's
    });
  });

  test("attack: a background process re-arming a different name each time is stopped all the same", async () => {
    // Review g37: the counts were per path, so a loop arming eight hook names and keys in turn, each
    // fewer than six times a minute, with `true` between, ran on. Ten undos of any paths within a
    // minute stop it. Here five runs-later names in turn, one a round, a foreground call between.
    await requireSandbox();
    const { fx } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const names = [".envrc", ".idea", ".mcp.json", ".ripgreprc", ".vscode"];
    const js = script([
      `let n = 0; const names = ${JSON.stringify(names)};`,
      `setInterval(() => { if (fs.existsSync("go")) { fs.writeFileSync(names[n++ % names.length], "x\\n"); fs.unlinkSync("go"); } }, 10);`,
    ]);
    const id = String((await startBackground(host, js)).result!.id);
    const undone: Undone[] = [];
    let running: unknown = true;
    for (let round = 0; round < 14 && running !== false; round++) {
      writeFileSync(path.join(fx.root, "go"), "");
      const name = names[round % names.length];
      const stopped = await waitFor(
        () => !existsSync(path.join(fx.root, "go")) && !existsSync(path.join(fx.root, name)),
        5_000,
      ).then((again) => !again);
      const fg = (await host.call("local_shell", { command: "true" })) as Out;
      assert.equal(fg.status, "ok", JSON.stringify(fg));
      const out = (await host.call("process_output", { id }, { session: "bg" })) as Out;
      undone.push(...((out.result!.undone ?? []) as Undone[]));
      running = out.result!.running;
      assert.ok(!stopped || running === false, `round ${round}: neither made and undone, nor stopped`);
    }
    assert.equal(running, false, `stopped by latch: ${JSON.stringify(undone)}`);
    assert.ok(
      undone.some((u) => /stopped the process: latch undid 10 things within a minute/.test(u.what)),
      JSON.stringify(undone),
    );
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
  });

  test("what foreground calls make beside a background process does not count against it", async () => {
    // Review g6: two `git worktree add` calls beside a dev server counted two of its three strikes.
    await requireSandbox();
    const { fx } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const id = String((await startBackground(host, script([`setInterval(() => {}, 1000);`]))).result!.id);
    for (let i = 0; i < 3; i++) {
      // Made, then kept past the background process's 2 s check, then the call ends (its own check).
      const js = script([`fs.writeFileSync(".envrc", "export N=${i}\\n"); cp.execFileSync("sleep", ["2.5"]);`]);
      const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.equal(existsSync(path.join(fx.root, ".envrc")), false, "undone");
    }
    const list = (await host.call("process_output", { id }, { session: "bg" })) as Out;
    assert.equal(list.result!.running, true, JSON.stringify(list));
    await host.call("process_kill", { id }, { session: "bg" });
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
  });

  test("a background process making an entry again during one foreground call is stopped all the same", async () => {
    // Review g7: undos did not count while any foreground call ran, so a loop that made `.git/commondir`
    // again whenever a foreground call's flag was there lived for as long as such calls followed.
    await requireSandbox();
    const { fx, marker } = repo();
    const host = await fx.host({ envelope: "auto_edit" });
    const js = script([
      ...evilCommonDir(fx, marker),
      `setInterval(() => { if (fs.existsSync("flag") && !fs.existsSync(".git/commondir")) fs.writeFileSync(".git/commondir", ${JSON.stringify(evilAt(fx))} + "\\n"); }, 10);`,
    ]);
    const id = String((await startBackground(host, js)).result!.id);
    const fg = script([`fs.writeFileSync("flag", ""); cp.execFileSync("sleep", ["2"]); fs.unlinkSync("flag");`]);
    assert.equal(((await host.call("local_shell", { command: "node", args: ["-e", fg] })) as Out).status, "ok");
    const out = (await host.call("process_output", { id }, { session: "bg" })) as Out;
    assert.equal(out.result!.running, false, JSON.stringify(out));
    assert.ok(await waitFor(async () => markedProcesses().length === 0), "no process left");
    assert.equal(existsSync(path.join(fx.root, ".git/commondir")), false);
    userRunsGit(fx);
    assert.equal(existsSync(marker), false);
  });

  test("a background process: undone when it writes (at process_output) and when it ends", async () => {
    await requireSandbox();
    const { fx, marker } = repo();
    // A background start is asked for (the fixture's approver says yes); it runs workspace-write.
    const host = await fx.host({ envelope: "auto_edit" });
    const js = script([
      `fs.writeFileSync(".git/commondir", "/nowhere\\n"); console.log("first");`,
      `process.stdin.once("data", () => { fs.writeFileSync(".envrc", "touch ${marker}\\n"); console.log("second"); process.exit(0); });`,
    ]);
    const start = await startBackground(host, js);
    assert.equal(start.result!.mode, "workspace-write");
    const id = String(start.result!.id);
    const read = async () => (await host.call("process_output", { id }, { session: "bg" })) as Out;
    let seen: Out | undefined;
    const undoneSeen: Undone[] = [];
    assert.ok(
      await waitFor(async () => {
        seen = await read();
        undoneSeen.push(...((seen.result!.undone ?? []) as Undone[]));
        return String(seen.result!.stdout.text).includes("first") && undoneSeen.length > 0;
      }),
      JSON.stringify(seen),
    );
    assert.equal(existsSync(path.join(fx.root, ".git/commondir")), false, "undone while it runs");
    assert.deepEqual(
      undoneSeen.map((u) => u.path),
      [".git/commondir"],
    );
    // Named for the background run when its own check found it; a write that lands while a
    // process_output call runs is found by that call's check around it first (seen on a loaded machine).
    assert.match(undoneSeen[0].what, /made by a contained process/);
    assert.ok(outcomes(host).some((o) => (o.undone as Undone[] | undefined)?.[0]?.path === ".git/commondir"));
    // The second write, then the end: checked as it ends, before anyone asks. process_input is a
    // shell-axis call with its own check around it, so the undo may be reported there or at process_list.
    const input = (await host.call("process_input", { id, text: "go\n" }, { session: "bg" })) as Out;
    assert.equal(input.status, "ok");
    assert.ok(await waitFor(async () => markedProcesses().length === 0));
    assert.ok(await waitFor(async () => !existsSync(path.join(fx.root, ".envrc"))), ".envrc undone at the end");
    const list = (await host.call("process_list", {}, { session: "bg" })) as Out;
    const reported = [...((input.result!.undone ?? []) as Undone[]), ...((list.result!.undone ?? []) as Undone[])];
    assert.deepEqual(
      reported.map((u) => u.path),
      [".envrc"],
    );
    const logged = outcomes(host)
      .slice(-2)
      .flatMap((o) => (o.undone ?? []) as Undone[]);
    assert.deepEqual(
      logged.map((u) => u.path),
      [".envrc"],
    );
    userRunsGit(fx);
    assert.equal(existsSync(marker), false);
  });
});

test("no write of the guard's own: a call that changes nothing reports nothing", async () => {
  await requireSandbox();
  const { fx } = repo();
  writeFileSync(path.join(fx.root, ".envrc"), "export A=1\n");
  const { out } = await runContained(fx, script([`fs.writeFileSync("out.txt", "made");`]));
  assert.equal(out.result!.undone, undefined);
  assert.equal(readFileSync(path.join(fx.root, "out.txt"), "utf8"), "made");
  assert.equal(readFileSync(path.join(fx.root, ".envrc"), "utf8"), "export A=1\n");
});
