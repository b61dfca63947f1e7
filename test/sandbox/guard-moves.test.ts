// What the control guard (src/sandbox/guard.ts) does when what the user had is moved during a call.
// A box cannot move it any more: every folder above a git folder, a `.git` file or a runs-later entry
// is a mount point there (bwrap.ts; pinned-folders.test.ts tries it). The guard still judges such a
// move, for what no box pinned (the user's own, made while a background process ran) and as a second
// line: here the moves are made in this process between a guard's start and its check, as a box's
// would be, and what each check does to the disk is what is asserted.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { ControlGuard } from "../../src/sandbox/guard.js";

const base = mkdtempSync(path.join(os.tmpdir(), "latch-guard-moves-"));
after(() => rmSync(base, { recursive: true, force: true }));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base };
const git = (cwd: string, ...a: string[]) =>
  execFileSync("git", ["-c", "user.email=u@x", "-c", "user.name=u", ...a], { cwd, env, encoding: "utf8" });

function workspace(name: string): string {
  const root = path.join(base, name);
  mkdirSync(root);
  return root;
}

function write(root: string, rel: string, content: string, mode = 0o644): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), content, { mode });
}

/** One call: a guard's start, what its processes do, its check (the undone paths), its end. */
function call(root: string, does: () => void): { path: string; what: string }[] {
  const guard = ControlGuard.start(root);
  try {
    does();
    return guard.check();
  } finally {
    guard.end();
  }
}

test("a user's repository renamed to a runs-later name is renamed aside, not removed", () => {
  const root = workspace("to-vscode");
  write(root, "sub/src/main.c", "int main(void) { return 0; }\n");
  git(root, "init", "-q", "sub");
  const undone = call(root, () => {
    mkdirSync(path.join(root, "pkg"));
    renameSync(path.join(root, "sub"), path.join(root, "pkg/.vscode"));
    // What an editor runs, put beside the user's files: kept with them, the entry must still stop running.
    writeFileSync(path.join(root, "pkg/.vscode/tasks.json"), "{}");
  });
  assert.deepEqual(
    undone.map((u) => u.path),
    ["pkg/.vscode"],
  );
  assert.match(
    undone[0].what,
    /^renamed to `.*\.latch-aside-[0-9a-f]{12}`, not removed: it holds the git folder `sub\/\.git` that was there before the call/,
  );
  assert.equal(existsSync(path.join(root, "pkg/.vscode")), false);
  const aside = readdirSync(path.join(root, "pkg")).find((n) => n.startsWith(".vscode.latch-aside-"))!;
  assert.equal(readFileSync(path.join(root, "pkg", aside, "src/main.c"), "utf8"), "int main(void) { return 0; }\n");
  assert.equal(existsSync(path.join(root, "pkg", aside, ".git/HEAD")), true);
});

test("an existing sub/.envrc moved into node_modules, changed there and moved back is undone as new", () => {
  const root = workspace("envrc-back");
  write(root, "sub/.envrc", "export USERS_OWN=1\n");
  write(root, "sub/main.c", "int main(void) { return 0; }\n");
  write(root, "node_modules/.keep", "");
  const at = (rel: string) => path.join(root, rel);
  assert.deepEqual(
    call(root, () => renameSync(at("sub"), at("node_modules/sub"))),
    [],
  );
  call(root, () => appendFileSync(at("node_modules/sub/.envrc"), "touch /tmp/PWNED\n"));
  const undone = call(root, () => renameSync(at("node_modules/sub"), at("sub")));
  assert.deepEqual(
    undone.map((u) => u.path),
    ["sub/.envrc"],
  );
  // Nothing the model wrote is left where a shell would run it; the rest of the folder is the user's.
  assert.equal(existsSync(at("sub/.envrc")), false);
  assert.equal(readFileSync(at("sub/main.c"), "utf8"), "int main(void) { return 0; }\n");
});

test("the user's own repository moved below an entry set aside stays theirs, hook and keys", () => {
  // Review g26: judged as new below the aside, the user's repository lost its pre-commit hook and its
  // keys (kept beside them, but not theirs to use until put back by hand).
  const root = workspace("below-aside");
  git(root, "init", "-q");
  git(root, "init", "-q", "lib");
  git(root, "-C", "lib", "config", "alias.st", "status");
  write(root, "lib/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755);
  const at = (rel: string) => path.join(root, rel);
  for (const top of [".vscode", "d.latch-aside-000000000000"]) {
    call(root, () => {
      mkdirSync(at(`x/${top}`), { recursive: true });
      renameSync(at("lib"), at(`x/${top}/lib`));
    });
    const [now] = readdirSync(at("x"));
    if (top === ".vscode") assert.match(now, /^\.vscode\.latch-aside-[0-9a-f]{12}$/, "the runs-later name set aside");
    const back = call(root, () => {
      renameSync(at(`x/${now}/lib`), at("lib"));
      rmSync(at("x"), { recursive: true });
    });
    assert.deepEqual(back, [], top);
    assert.match(readFileSync(at("lib/.git/config"), "utf8"), /st = status/, top);
    assert.ok(existsSync(at("lib/.git/hooks/pre-commit")), `${top}: the user's hook`);
  }
});

test("the user's folder moved into a new .git below a name that is not UTF-8 is not deleted with it", () => {
  // Review g24: that repository was the one thing the guard still deleted, and a folder of the user's
  // moved into it went with it.
  const root = workspace("unnamed-git");
  write(root, "sub/.envrc", "export FOO=user\n");
  write(root, "sub/.vscode/settings.json", '{ "user": true }\n');
  const odd = Buffer.concat([Buffer.from(root + "/"), Buffer.from([0xff])]);
  const undone = call(root, () => {
    mkdirSync(Buffer.concat([odd, Buffer.from("/.git")]), { recursive: true });
    renameSync(path.join(root, "sub"), Buffer.concat([odd, Buffer.from("/.git/sub")]));
  });
  assert.ok(
    undone.some((u) => u.path === "\\xff/.git"),
    JSON.stringify(undone),
  );
  const names = readdirSync(odd);
  const kept = names.find((n) => n.startsWith(".git.latch-aside-"));
  assert.ok(kept, `the .git folder set aside: ${names.join(", ")}`);
  const inKept = (rel: string) => Buffer.concat([odd, Buffer.from(`/${kept}/${rel}`)]);
  assert.equal(readFileSync(inKept("sub/.envrc"), "utf8"), "export FOO=user\n");
  assert.equal(readFileSync(inKept("sub/.vscode/settings.json"), "utf8"), '{ "user": true }\n');
});

test("the folder above the user's proj/.vscode moved away and another planted there: that one is set aside", () => {
  const root = workspace("planted");
  write(root, "proj/.vscode/settings.json", '{ "users": "own" }\n');
  const at = (rel: string) => path.join(root, rel);
  const undone = call(root, () => {
    renameSync(at("proj"), at("proj2"));
    write(root, "proj/.vscode/tasks.json", '{"tasks":[]}\n');
  });
  assert.match(
    JSON.stringify(undone),
    /"path":"proj\/.vscode","what":"renamed to `\.vscode\.latch-aside-[0-9a-f]{12}` \(set aside, not deleted[^"]*made by a contained process/,
  );
  assert.equal(existsSync(at("proj/.vscode")), false, "the planted one no longer runs");
  assert.equal(
    readFileSync(at("proj2/.vscode/settings.json"), "utf8"),
    '{ "users": "own" }\n',
    "the user's own is kept",
  );
});
