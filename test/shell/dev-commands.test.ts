// Ordinary developer commands that must be allowed when their programs are allowlisted: this table
// keeps false refusals visible. Each row is planned under a policy and must come out as these steps.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { makeShellFixture } from "./shell-fixture.js";

const fx = makeShellFixture();
after(() => fx.cleanup());

const POLICY = {
  _allowed_commands:
    "git,npm,npx,grep,find,ls,cat,node,make,mkdir,touch,head,wc,python3,echo,rm,timeout,nice,env,sh,tsc,tar,sed,awk,sort,perl",
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
  // Forms the program tables read closely (issue 14): they must stay allowed by the planner.
  ["git log -n 5", [["git", "log", "-n", "5"]]],
  ["git show HEAD:src/a.ts", [["git", "show", "HEAD:src/a.ts"]]],
  ["git diff --no-index a.txt /dev/null", [["git", "diff", "--no-index", "a.txt", "/dev/null"]]],
  ["git log --grep=fix -n 3 --format='%h/%s'", [["git", "log", "--grep=fix", "-n", "3", "--format=%h/%s"]]],
  ["git grep -n TODO -- src", [["git", "grep", "-n", "TODO", "--", "src"]]],
  [
    "git fetch origin && git rebase origin/main",
    [
      ["git", "fetch", "origin"],
      ["git", "rebase", "origin/main"],
    ],
  ],
  ["git push -u origin feature/x", [["git", "push", "-u", "origin", "feature/x"]]],
  ["git stash pop", [["git", "stash", "pop"]]],
  ["git diff main...HEAD -- src", [["git", "diff", "main...HEAD", "--", "src"]]],
  ["tar -xzf a.tgz -C build", [["tar", "-xzf", "a.tgz", "-C", "build"]]],
  ["tar -czf out.tgz src", [["tar", "-czf", "out.tgz", "src"]]],
  ["tar tzf out.tgz", [["tar", "tzf", "out.tgz"]]],
  ["sed -n 1,5p a.txt", [["sed", "-n", "1,5p", "a.txt"]]],
  ["sed -n '/start/,/end/p' a.txt", [["sed", "-n", "/start/,/end/p", "a.txt"]]],
  ["sed -i 's/foo/bar/g' src/a.ts", [["sed", "-i", "s/foo/bar/g", "src/a.ts"]]],
  ["sed -e 's|/usr/local|/opt|' a.txt", [["sed", "-e", "s|/usr/local|/opt|", "a.txt"]]],
  ["awk -F, '{print $2}' a.txt", [["awk", "-F,", "{print $2}", "a.txt"]]],
  ["awk '/^#/ {n++} END {print n}' a.txt", [["awk", "/^#/ {n++} END {print n}", "a.txt"]]],
  [
    "find . -name '*.ts' -not -path './node_modules/*'",
    [["find", ".", "-name", "*.ts", "-not", "-path", "./node_modules/*"]],
  ],
  ["grep -rn '/api/' src", [["grep", "-rn", "/api/", "src"]]],
  ["grep -rn -e '/v1/' -e '/v2/' src", [["grep", "-rn", "-e", "/v1/", "-e", "/v2/", "src"]]],
  ["sort -u a.txt", [["sort", "-u", "a.txt"]]],
  ["node --import tsx --test test/a.test.ts", [["node", "--import", "tsx", "--test", "test/a.test.ts"]]],
  ["npx prettier --check .", [["npx", "prettier", "--check", "."]]],
  ["python3 -c 'import sys; print(sys.version)'", [["python3", "-c", "import sys; print(sys.version)"]]],
  ["perl -ne 'print if /x/' a.txt", [["perl", "-ne", "print if /x/", "a.txt"]]],
];

describe("ordinary developer commands are allowed when their programs are allowlisted", () => {
  test(`false refusals stay at or under 5% (${rows.length} lines)`, async () => {
    const refused: string[] = [];
    for (const [line] of rows)
      await fx.plan(line, POLICY).catch((err: Error) => refused.push(`${line}: ${err.message}`));
    assert.ok(refused.length <= rows.length * 0.05, `${refused.length}/${rows.length} refused:\n${refused.join("\n")}`);
  });
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
