// Ordinary developer commands that must be allowed when their programs are allowlisted: this table
// keeps false refusals visible. Each row is planned under a policy and must come out as these steps.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { makeShellFixture } from "./shell-fixture.js";

const fx = makeShellFixture();
after(() => fx.cleanup());

const POLICY = {
  _allowed_commands:
    "git,npm,npx,grep,find,ls,cat,node,make,mkdir,touch,head,wc,python3,echo,rm,timeout,nice,env,sh,tsc",
};

const rows: [string, string[][]][] = [
  [
    "git status && git diff --stat",
    [
      ["git", "status"],
      ["git", "diff", "--stat"],
    ],
  ],
  ["npm test", [["npm", "test"]]],
  ["grep -rn 'a b' src", [["grep", "-rn", "a b", "src"]]],
  ["find . -name '*.ts'", [["find", ".", "-name", "*.ts"]]],
  ["npm run build", [["npm", "run", "build"]]],
  [
    "npm ci && npm test",
    [
      ["npm", "ci"],
      ["npm", "test"],
    ],
  ],
  ["git log --oneline -n 20", [["git", "log", "--oneline", "-n", "20"]]],
  ["git diff HEAD~1 -- src", [["git", "diff", "HEAD~1", "--", "src"]]],
  ["git stash show -p stash@{0}", [["git", "stash", "show", "-p", "stash@{0}"]]],
  ["git log --format='%h %s' -n 5", [["git", "log", "--format=%h %s", "-n", "5"]]],
  [`git commit -m 'fix: handle "quoted" names'`, [["git", "commit", "-m", 'fix: handle "quoted" names']]],
  [
    `git add src/a.ts && git commit -m "msg with 'single' quotes"`,
    [
      ["git", "add", "src/a.ts"],
      ["git", "commit", "-m", "msg with 'single' quotes"],
    ],
  ],
  ["git checkout -b feature/x", [["git", "checkout", "-b", "feature/x"]]],
  ["git rebase -i HEAD~3", [["git", "rebase", "-i", "HEAD~3"]]],
  [
    "git -c user.email=a@b.c commit --amend --no-edit",
    [["git", "-c", "user.email=a@b.c", "commit", "--amend", "--no-edit"]],
  ],
  ["ls -la src", [["ls", "-la", "src"]]],
  ["cat package.json", [["cat", "package.json"]]],
  ["node --version", [["node", "--version"]]],
  ["node -e 'console.log(1)'", [["node", "-e", "console.log(1)"]]],
  ["npx tsc --noEmit -p .", [["npx", "tsc", "--noEmit", "-p", "."]]],
  ["make -j4 test", [["make", "-j4", "test"]]],
  [
    "mkdir -p build/out && touch build/out/.keep",
    [
      ["mkdir", "-p", "build/out"],
      ["touch", "build/out/.keep"],
    ],
  ],
  ["cd src && ls", [["cd", "src"], ["ls"]]],
  ["cd src\nls -la\ncd\nls", [["cd", "src"], ["ls", "-la"], ["cd"], ["ls"]]],
  [`grep -rn "TODO" --include='*.ts' .`, [["grep", "-rn", "TODO", "--include=*.ts", "."]]],
  ["grep -E 'foo|bar' src/a.ts", [["grep", "-E", "foo|bar", "src/a.ts"]]],
  ["grep -c '^$' src/a.ts", [["grep", "-c", "^$", "src/a.ts"]]],
  [
    "find src -type f -name '*.test.ts' -newer package.json",
    [["find", "src", "-type", "f", "-name", "*.test.ts", "-newer", "package.json"]],
  ],
  ["find . -name '*.o' -delete", [["find", ".", "-name", "*.o", "-delete"]]],
  ["find . -name '*.orig' -exec rm '{}' +", [["find", ".", "-name", "*.orig", "-exec", "rm", "{}", "+"]]],
  ["python3 -m pytest -q tests", [["python3", "-m", "pytest", "-q", "tests"]]],
  ["head -n 20 README.md", [["head", "-n", "20", "README.md"]]],
  ["wc -l src/a.ts", [["wc", "-l", "src/a.ts"]]],
  ["timeout 60 npm test", [["timeout", "60", "npm", "test"]]],
  ["rm -rf build dist", [["rm", "-rf", "build", "dist"]]],
  [
    "npm test || echo 'tests failed'",
    [
      ["npm", "test"],
      ["echo", "tests failed"],
    ],
  ],
  ["sh -c 'npm ci && npm test'", [["sh", "-c", "npm ci && npm test"]]],
  [
    "git diff --stat; git status --short",
    [
      ["git", "diff", "--stat"],
      ["git", "status", "--short"],
    ],
  ],
  ["echo 'a\\nb'", [["echo", "a\\nb"]]],
  ["ls -la # see what is here", [["ls", "-la"]]],
];

describe("ordinary developer commands are allowed when their programs are allowlisted", () => {
  for (const [line, steps] of rows) {
    test(line, async () => {
      const plan = await fx.plan(line, POLICY);
      assert.deepEqual(
        plan.steps.map((s) => s.argv),
        steps,
      );
    });
  }
});
