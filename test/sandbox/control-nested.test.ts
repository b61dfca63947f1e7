// What runs later, below the root: a contained process (auto_edit runs `node` so, with no question)
// makes a `.envrc` in a subfolder (direnv runs it when the user enters that folder), a `.vscode` and a
// `.husky` deeper down, and a repository two folders deep with `core.hooksPath`. The control guard
// (src/sandbox/guard.ts) watches the "runs later" names in every folder, through the sandbox's own
// cached walk: each one made during the call is set aside (renamed) and named in the result and the policy log;
// the ones that were there before are kept.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { waitFor } from "../helpers/wait.js";
import {
  initRepo,
  makeSandboxFixture,
  processesWith,
  requireSandbox,
  undoneAfterNode,
  type SandboxFixture,
} from "./sandbox-fixture.js";

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

test("runs-later entries a contained process makes in subfolders, and a nested repository's hooksPath, are undone", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-nested-");
  fixtures.push(fx);
  initRepo(fx);
  fx.write("kept/.envrc", "echo the user's own\n"); // there before the call: not the guard's to remove
  const js = [
    `const fs = require("fs"); const cp = require("child_process");`,
    // The user's own, there before the call: read-only in the box (EROFS), so the attempt fails.
    `try { fs.appendFileSync("kept/.envrc", "touch MARKER\\n"); } catch {}`,
    `fs.mkdirSync("sub/deeper/.vscode", { recursive: true });`,
    `fs.writeFileSync("sub/.envrc", "touch MARKER\\n");`,
    `fs.writeFileSync("sub/deeper/.vscode/tasks.json", "{}");`,
    `fs.mkdirSync("pkg/.husky", { recursive: true }); fs.writeFileSync("pkg/.husky/pre-commit", "touch MARKER\\n");`,
    `cp.execFileSync("git", ["init", "-q", "a/b/repo"]);`,
    `cp.execFileSync("git", ["-C", "a/b/repo", "config", "core.hooksPath", "/tmp/hooks-of-the-model"]);`,
  ].join("\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const undone = (await undoneAfterNode(host, js)).map((u) => u.path).sort();
  assert.deepEqual(undone, ["a/b/repo/.git/config", "pkg/.husky", "sub/.envrc", "sub/deeper/.vscode"]);
  for (const p of ["sub/.envrc", "sub/deeper/.vscode", "pkg/.husky"])
    assert.equal(existsSync(path.join(fx.root, p)), false, `${p} is still there`);
  assert.doesNotMatch(readFileSync(path.join(fx.root, "a/b/repo/.git/config"), "utf8"), /hooksPath/i);
  assert.equal(readFileSync(path.join(fx.root, "kept/.envrc"), "utf8"), "echo the user's own\n");
});

test("a new repository's config made a link to the model's own file is replaced, and a 300-deep .vscode is set aside whole", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-nested-link-");
  fixtures.push(fx);
  const js = [
    `const fs = require("fs"); const cp = require("child_process");`,
    `cp.execFileSync("git", ["init", "-q", "sub"]);`,
    `fs.writeFileSync("evil.cfg", "[core]\\n\\tfsmonitor = touch MARKER\\n");`,
    `fs.rmSync("sub/.git/config"); fs.symlinkSync("../../evil.cfg", "sub/.git/config");`,
    // Deeper than the descriptors a removal holds at once: set aside, all of it moves as one.
    `let d = "pkg/.vscode"; fs.mkdirSync(d, { recursive: true }); fs.writeFileSync(d + "/tasks.json", "{}");`,
    `for (let i = 0; i < 300; i++) { d += "/z"; fs.mkdirSync(d); }`,
  ].join("\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const undone = await undoneAfterNode(host, js);
  assert.ok(!undone.some((u) => u.what.startsWith("NOT undone")), JSON.stringify(undone));
  assert.deepEqual(undone.map((u) => u.path).sort(), ["pkg/.vscode", "sub/.git/config"]);
  // The config is a file again, git init's, and the model's file it pointed at is left as it was.
  assert.equal(lstatSync(path.join(fx.root, "sub/.git/config")).isFile(), true);
  assert.doesNotMatch(readFileSync(path.join(fx.root, "sub/.git/config"), "utf8"), /fsmonitor/);
  assert.match(readFileSync(path.join(fx.root, "evil.cfg"), "utf8"), /fsmonitor/);
  assert.equal(existsSync(path.join(fx.root, "pkg/.vscode")), false);
  // Renamed beside itself, never deleted (it might have been the user's): the name no longer runs.
  const [aside, ...more] = readdirSync(path.join(fx.root, "pkg"));
  assert.match(aside, /^\.vscode\.latch-aside-[0-9a-f]{12}$/);
  assert.deepEqual(more, []);
  assert.equal(readFileSync(path.join(fx.root, "pkg", aside, "tasks.json"), "utf8"), "{}");
  assert.ok(existsSync(path.join(fx.root, "pkg", aside, ...Array<string>(300).fill("z"))), "all of it, 300 deep");
  assert.match(
    undone.find((u) => u.path === "pkg/.vscode")!.what,
    /^renamed to `.*\.latch-aside-[0-9a-f]{12}` \(set aside, not deleted/,
  );
  // The new repository's config as the model left it (a link) is kept beside git's new one, which git never reads.
  const kept = readdirSync(path.join(fx.root, "sub/.git")).filter((n) => n.startsWith("config.latch-aside-"));
  assert.equal(kept.length, 1);
  assert.equal(lstatSync(path.join(fx.root, "sub/.git", kept[0])).isSymbolicLink(), true);
  host.close();
});

test("a submodule's git folder whose HEAD a contained process made a dangling link keeps its config and hooks read-only", async () => {
  // Review h4: git takes `HEAD -> refs/heads/x` though the target does not exist; latch took the folder
  // for no git folder (its HEAD "not a file"), so the next call could write its config and hooks.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-nested-head-");
  fixtures.push(fx);
  initRepo(fx);
  const m = path.join(fx.root, ".git/modules/m");
  fx.write(".git/modules/m/HEAD", "ref: refs/heads/main\n");
  fx.write(".git/modules/m/config", "[core]\n\tworktree = ../../../m\n");
  fx.write(".git/modules/m/hooks/pre-commit", "#!/bin/sh\necho users-own\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  await undoneAfterNode(
    host,
    `const fs = require("fs"); fs.unlinkSync(".git/modules/m/HEAD"); fs.symlinkSync("refs/heads/zz", ".git/modules/m/HEAD");`,
  );
  assert.equal(lstatSync(path.join(m, "HEAD")).isSymbolicLink(), true, "the link was made (HEAD is not read-only)");
  const tries = [
    `fs.appendFileSync(".git/modules/m/config", "[core]\\n\\tfsmonitor = touch /tmp/PWNED\\n")`,
    `fs.writeFileSync(".git/modules/m/hooks/post-checkout", "#!/bin/sh\\ntouch /tmp/PWNED\\n", { mode: 0o755 })`,
  ];
  const js = `const fs = require("fs"); for (const t of [${tries.map((t) => JSON.stringify(t)).join(", ")}]) try { eval(t); console.log("WROTE") } catch (e) { console.log(e.code) }`;
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as {
    result?: { stdout?: string };
  };
  assert.doesNotMatch(String(out.result?.stdout), /WROTE/, JSON.stringify(out));
  assert.equal(readFileSync(path.join(m, "config"), "utf8"), "[core]\n\tworktree = ../../../m\n");
  assert.equal(existsSync(path.join(m, "hooks/post-checkout")), false);
  assert.equal(readFileSync(path.join(m, "hooks/pre-commit"), "utf8"), "#!/bin/sh\necho users-own\n");
  host.close();
});

test("a link named like a secret that leads to .git stops nothing, with a tracked secret shown to git", async () => {
  // Review h4: the link's folder was masked whole (a read-only tmpfs over .git), and git-view's own
  // mount in .git/info could then not be made: every later contained call failed with bwrap's message.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-link-git-");
  fixtures.push(fx);
  initRepo(fx);
  fx.write("keys/test.pem", "KEY test-only\n");
  fx.git("add", "keys/test.pem");
  fx.git("commit", "-q", "-m", "test key");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  await undoneAfterNode(host, `require("fs").symlinkSync(".git", "g" + ".pem")`);
  const out = (await host.call("local_shell", { command: "node", args: ["-e", "console.log('STILL-RUNS')"] })) as {
    result?: { exit_code?: number; stdout?: string };
  };
  assert.equal(out.result?.exit_code, 0, JSON.stringify(out));
  assert.match(String(out.result?.stdout), /STILL-RUNS/);
  host.close();
});

test("the user's own new repository and .envrc, made beside a background process, are set aside whole: nothing of them is deleted", async () => {
  // Review g20's repro 2: the guard cannot tell who made an entry while a background process runs, so
  // it judged the user's `git init`, hook, config keys and `.envrc` the model's and deleted them.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-nested-users-");
  fixtures.push(fx);
  initRepo(fx);
  const host = await fx.host();
  const bg = (await host.call("local_shell", { command: "exec sleep 30.4107", shell: true, background: true })) as {
    status: string;
    result?: { id: string };
  };
  assert.equal(bg.status, "ok", JSON.stringify(bg));
  // The user, outside latch, in a terminal beside it:
  fx.git("init", "-q", "sub");
  fx.git("-C", "sub", "config", "alias.st", "status");
  const hook = path.join(fx.root, "sub/.git/hooks/pre-commit");
  writeFileSync(hook, "#!/bin/sh\nnpm run lint\n");
  chmodSync(hook, 0o755);
  writeFileSync(path.join(fx.root, "sub/.envrc"), "use nix\n");
  const undone: { path: string; what: string }[] = [];
  const seen = await waitFor(async () => {
    const r = (await host.call("process_output", { id: bg.result!.id })) as { result?: { undone?: typeof undone } };
    undone.push(...(r.result?.undone ?? []));
    // The user's own steps are many: a check may come between them (a config rewritten before the alias).
    return (
      ["sub/.envrc", "sub/.git/config", "sub/.git/hooks/pre-commit"].every((p) => undone.some((u) => u.path === p)) &&
      !/st = status/.test(readFileSync(path.join(fx.root, "sub/.git/config"), "utf8"))
    );
  }, 15_000);
  assert.ok(
    seen,
    `${JSON.stringify(undone)}\n${readFileSync(path.join(fx.root, "sub/.git/config"), "utf8")}\n${readdirSync(path.join(fx.root, "sub/.git")).join(" ")}`,
  );
  assert.ok(!undone.some((u) => u.what.startsWith("NOT undone")), JSON.stringify(undone));
  // None of those names runs now; each is beside its place, as the user wrote it.
  const asideIn = (dir: string, name: string) => {
    const found = readdirSync(path.join(fx.root, dir)).filter((n) => n.startsWith(`${name}.latch-aside-`));
    assert.equal(found.length, 1, `${dir}: ${readdirSync(path.join(fx.root, dir)).join(", ")}`);
    return readFileSync(path.join(fx.root, dir, found[0]), "utf8");
  };
  assert.equal(existsSync(path.join(fx.root, "sub/.envrc")), false);
  assert.equal(asideIn("sub", ".envrc"), "use nix\n");
  assert.equal(existsSync(hook), false);
  assert.equal(asideIn("sub/.git/hooks", "pre-commit"), "#!/bin/sh\nnpm run lint\n");
  assert.doesNotMatch(readFileSync(path.join(fx.root, "sub/.git/config"), "utf8"), /st = status/);
  const configs = readdirSync(path.join(fx.root, "sub/.git")).filter((n) => n.startsWith("config.latch-aside-"));
  assert.ok(
    configs.some((n) => /\[alias\]\s+st = status/.test(readFileSync(path.join(fx.root, "sub/.git", n), "utf8"))),
    "the user's alias is in a config kept aside",
  );
  for (const u of undone.filter((u) => u.path === "sub/.git/config"))
    assert.match(
      u.what,
      /^rewritten: .*; the file as it was is kept as `config\.latch-aside-[0-9a-f]{12}`( \(background bg\d+\))?$/,
    );
  // The repository itself is whole: the user's git works in it (a failing git throws here).
  fx.git("-C", "sub", "status", "--short");
  assert.ok(existsSync(path.join(fx.root, "sub/.git/HEAD")));
  assert.equal(((await host.call("process_kill", { id: bg.result!.id })) as { status: string }).status, "ok");
  assert.deepEqual(processesWith("30.4107"), []);
  host.close();
});

test("attack: a repository inside an entry set aside, renamed back by a later call, runs nothing at the user's git status", async () => {
  // Review g23: the walk listed `sub/.vscode/.git`, then `sub/.vscode` was set aside, so the repository
  // moved before it was neutralized; the next call's baseline took it for the user's, a rename made it
  // `tools`, and the user's `git status` there ran its core.fsmonitor. The same through a folder of the
  // user's made a git directory (`src/objects`), a hooks folder the user's config names, a chain of
  // entries deeper than the guard's rounds (`a/.vscode/b/.vscode/c/.vscode/d/.vscode/.git`: judged
  // deepest first), and an `.envrc` inside an entry set aside.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-nested-aside-repo-");
  fixtures.push(fx);
  initRepo(fx);
  fx.git("config", "core.hooksPath", ".githooks"); // the user's, before latch; the folder is not there yet
  fx.write("src/main.c", "int main(void) { return 0; }\n");
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const repo = (dir: string) =>
    `mkdir -p ${dir} && git -C ${dir} init -q && git -C ${dir} config core.fsmonitor 'touch ${marker}; false' && ` +
    `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${dir}/.git/hooks/pre-commit && chmod +x ${dir}/.git/hooks/pre-commit`;
  const made = [
    repo("sub/.vscode"),
    "mkdir -p sub/.vscode/deep && echo 'touch MARKER' > sub/.vscode/deep/.envrc",
    "echo 'ref: refs/heads/main' > src/HEAD && mkdir -p src/refs && " + repo("src/objects"),
    repo(".githooks"),
    repo("a/.vscode/b/.vscode/c/.vscode/d/.vscode"),
  ].join(" && ");
  const host = await fx.host({ envelope: "auto_edit" });
  const one = (await host.call("local_shell", { command: "sh", args: ["-c", made] })) as {
    status: string;
    result?: { undone?: { path: string; what: string }[] };
  };
  assert.equal(one.status, "ok", JSON.stringify(one));
  assert.ok(!(one.result?.undone ?? []).some((u) => u.what.startsWith("NOT undone")), JSON.stringify(one.result));
  const asideOf = (dir: string, name: string) => {
    const found = readdirSync(path.join(fx.root, dir)).filter((n) => n.startsWith(`${name}.latch-aside-`));
    assert.equal(found.length, 1, `${dir}/${name}: ${readdirSync(path.join(fx.root, dir)).join(", ")}`);
    return path.join(dir, found[0]);
  };
  const outer = asideOf("a", ".vscode");
  const asides = [asideOf("sub", ".vscode"), asideOf("src", "objects"), asideOf(".", ".githooks"), outer];
  let inner = outer;
  for (const step of ["b", "c", "d"]) inner = asideOf(path.join(inner, step), ".vscode");
  // Each repository they hold runs nothing: neutralized where it was, before its entry moved.
  for (const r of [asides[0], asides[1], asides[2], inner]) {
    assert.doesNotMatch(readFileSync(path.join(fx.root, r, ".git/config"), "utf8"), /fsmonitor/, r);
    assert.equal(existsSync(path.join(fx.root, r, ".git/hooks/pre-commit")), false, r);
  }
  assert.equal(existsSync(path.join(fx.root, asides[0], "deep/.envrc")), false, "the .envrc inside was set aside too");
  // A later call renames each to a plain name: it cannot (each holds a git folder, and the box pins the
  // folders above one: bwrap.ts). The user's git runs in each where it is.
  const renames = asides.map((a, i) => `mv '${a}' tools${i} 2>&1 || true`).join("; ");
  const two = (await host.call("local_shell", { command: "sh", args: ["-c", renames] })) as {
    status: string;
    result?: { stdout?: string };
  };
  assert.equal(two.status, "ok", JSON.stringify(two));
  assert.equal(String(two.result!.stdout).match(/Device or resource busy/g)?.length, 4, JSON.stringify(two.result));
  for (const dir of [asides[0], asides[1], asides[2], inner])
    execFileSync("git", ["status", "--short"], {
      cwd: path.join(fx.root, dir),
      env: { ...process.env, HOME: fx.home },
    });
  assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  rmSync(marker, { force: true });
  host.close();
});

test("attack: a chain of new repositories, each in the one before's hooks, runs nothing at the user's git status", async () => {
  // Review g24: neutralizing a repository set its hooks entries aside at once, whatever they were; a
  // hooks entry can be a repository (or a `node_modules` holding one, which no walk enters), so each
  // round of the check moved the next level out unjudged, and the fourth stayed as the model made it.
  // Now a folder in `hooks` (which git never runs) stays where it is, and what a walk can see is judged
  // in place: the next call's gitlink to the deepest makes it new to that call, and neutralized.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-hook-chain-");
  fixtures.push(fx);
  initRepo(fx);
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const chain = (hook: string) => {
    const levels = ["r", `r/hooks/${hook}`, `r/hooks/${hook}/hooks/${hook}`];
    const last = `${levels[2]}/hooks/${hook}`;
    return {
      last,
      sh:
        levels.map((l) => `git init -q --bare ${l}`).join(" && ") +
        ` && git init -q ${last} && git -C ${last} -c user.name=m -c user.email=m@e commit -q --allow-empty -m x` +
        ` && git -C ${last} config core.fsmonitor 'touch ${marker}; false'`,
    };
  };
  const host = await fx.host({ envelope: "auto_edit" });
  for (const hook of ["node_modules", "h"]) {
    const { last, sh } = chain(hook);
    rmSync(path.join(fx.root, "r"), { recursive: true, force: true });
    const one = (await host.call("local_shell", { command: "sh", args: ["-c", sh] })) as { status: string };
    assert.equal(one.status, "ok", JSON.stringify(one));
    // Wherever the deepest repository is now (a guard that moves hooks entries moves it), the model links it.
    const found = execFileSync("find", ["r", "-name", ".git", "-type", "d"], { cwd: fx.root, encoding: "utf8" });
    const deepest = path.dirname(found.trim().split("\n")[0]);
    const link = `git update-index --add --cacheinfo 160000,$(git -C '${deepest}' rev-parse HEAD),'${deepest}'`;
    const two = (await host.call("local_shell", { command: "sh", args: ["-c", link] })) as {
      status: string;
      result?: { undone?: { path: string }[] };
    };
    assert.equal(two.status, "ok", JSON.stringify(two));
    execFileSync("git", ["status", "--short"], { cwd: fx.root, env: { ...process.env, HOME: fx.home } });
    assert.equal(existsSync(marker), false, `${hook}: the model's core.fsmonitor ran at the user's git status`);
    assert.equal(deepest, last, `${hook}: the folders in hooks stay where they are`);
    assert.doesNotMatch(readFileSync(path.join(fx.root, last, ".git/config"), "utf8"), /fsmonitor/);
    fx.git("rm", "-q", "-f", "--cached", deepest);
  }
  host.close();
});

test("attack: a repository behind more secret folders than the guard's rounds is judged at the next call", async () => {
  // Review g25: `.claude/.credentials.json` is a secret the walk lists and never enters; set aside, its
  // `.claude` no longer makes the child one, so each round of the check walked one level deeper, and a
  // repository three levels down outlived the rounds as the model made it. The next call's baseline took
  // it for the user's: moved to `tools`, or gitlinked, the user's git status ran its core.fsmonitor.
  // Nothing below an entry set aside is the user's to a later call now: it is judged again at its end.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-secret-chain-");
  fixtures.push(fx);
  initRepo(fx);
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const chain = (top: string) =>
    `c=.creden; c="$c"tials.json; r="${top}/.claude/$c/.claude/$c/.claude/$c/r"; mkdir -p "$r" && ` +
    `git -C "$r" init -q && git -C "$r" -c user.name=m -c user.email=m@e commit -q --allow-empty -m x && ` +
    `git -C "$r" config core.fsmonitor 'touch ${marker}; false'`;
  const host = await fx.host({ envelope: "auto_edit" });
  const one = (await host.call("local_shell", { command: "sh", args: ["-c", `${chain("a")} && ${chain("b")}`] })) as {
    status: string;
  };
  assert.equal(one.status, "ok", JSON.stringify(one));
  const where = (top: string) =>
    path.dirname(
      execFileSync("find", [top, "-name", ".git", "-type", "d"], { cwd: fx.root, encoding: "utf8" })
        .trim()
        .split("\n")[0],
    );
  const [a, b] = [where("a"), where("b")];
  const two = (await host.call("local_shell", {
    command: "sh",
    args: [
      "-c",
      `mv '${a}' tools 2>&1; git update-index --add --cacheinfo 160000,$(git -C '${b}' rev-parse HEAD),'${b}'`,
    ],
  })) as { status: string };
  assert.equal(two.status, "ok", JSON.stringify(two));
  // The rename may meet a pinned folder above the repository (bwrap.ts): then it is where it was.
  const moved = existsSync(path.join(fx.root, "tools")) ? "tools" : a;
  const env = { ...process.env, HOME: fx.home };
  spawnSync("git", ["status", "--short"], { cwd: path.join(fx.root, moved), env });
  spawnSync("git", ["status", "--short"], { cwd: fx.root, env });
  assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  for (const r of [moved, b])
    assert.doesNotMatch(readFileSync(path.join(fx.root, r, ".git/config"), "utf8"), /fsmonitor/);
  fx.git("rm", "-q", "-f", "--cached", b);
  host.close();
});

test("attack: a bare repository below an entry set aside, given a config and moved out, is judged new", async () => {
  // Review g26: the baseline kept the folders below an entry set aside, so a bare repository there,
  // configless when it was neutralized, written a core.fsmonitor later and moved out under a plain
  // name, was taken for a folder of the user's made a git directory: its marks were "the user's", and
  // nothing was judged. The same with a folder the model names like an aside itself.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-aside-bare-");
  fixtures.push(fx);
  initRepo(fx);
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  const sh = async (line: string) => {
    const out = (await host.call("local_shell", { command: "sh", args: ["-c", line] })) as { status: string };
    assert.equal(out.status, "ok", JSON.stringify(out));
  };
  for (const [i, top] of [".vscode", "d.latch-aside-000000000000"].entries()) {
    const x = `x${i}`;
    await sh(`mkdir -p ${x}/${top} && git init -q --bare ${x}/${top}/r && rm ${x}/${top}/r/config`);
    const [now] = readdirSync(path.join(fx.root, x));
    const config = `[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = "touch ${marker}; false"\\n`;
    await sh(`printf '${config}' > '${x}/${now}/r/config'; mv '${x}/${now}' ${x}/tools 2>&1; true`);
    // The rename may meet a pinned folder above the repository (bwrap.ts): then it is where it was.
    const r = path.join(fx.root, x, existsSync(path.join(fx.root, x, "tools")) ? "tools" : now, "r");
    // Neutralized, its config says no work tree any more: git may refuse; what matters is what it ran.
    spawnSync("git", ["status", "--short"], { cwd: r, env: { ...process.env, HOME: fx.home } });
    assert.equal(existsSync(marker), false, `${top}: the model's core.fsmonitor ran at the user's git status`);
    assert.doesNotMatch(readFileSync(path.join(r, "config"), "utf8"), /fsmonitor/, top);
  }
  host.close();
});
