// Where the workspace's links lead (src/sandbox/linked.ts), through the walk that uses it
// (scanWorkspace, as the guard and the box call it): what git may find there joins the walk's lists,
// and a workspace whose links lead into more than latch follows says so, with what to do, instead of
// making every call slow (review g38: 50,000 links made each later call 6.7 s).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { LINKED_FOLDERS, LINKS_LOOKED_UP } from "../../src/sandbox/linked.js";
import { scanWorkspace } from "../../src/sandbox/secrets.js";

const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
function workspace(): string {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-linked-")));
  made.push(root);
  return root;
}

test("what git may find where a link leads: below it, and above it past what git passes", () => {
  const root = workspace();
  mkdirSync(path.join(root, "node_modules/a/deep/er/.git"), { recursive: true });
  mkdirSync(path.join(root, "node_modules/b/mid/lib"), { recursive: true });
  mkdirSync(path.join(root, "node_modules/b/.git"));
  mkdirSync(path.join(root, "node_modules/b/mid/.git")); // empty: git goes on up
  writeFileSync(path.join(root, "node_modules/b/mid/HEAD"), "x");
  writeFileSync(path.join(root, "node_modules/c.txt"), "a file\n");
  symlinkSync("node_modules/a", path.join(root, "a"));
  symlinkSync("node_modules/b/mid/lib", path.join(root, "b"));
  symlinkSync("node_modules/c.txt", path.join(root, "c"));
  symlinkSync("/usr", path.join(root, "outside"));
  const scan = scanWorkspace(root, [], "lenient");
  assert.deepEqual(scan.gitDirs.map((g) => path.relative(root, g)).sort(), [
    "node_modules/a/deep/er/.git",
    "node_modules/b/.git",
    "node_modules/b/mid",
    "node_modules/b/mid/.git",
  ]);
  assert.deepEqual(scan.gitlinkErrors, []);
  // Not the walk's secrets: node_modules stays outside what the masks look at (docs/security.md).
  assert.ok(!scan.folders.has(path.join(root, "node_modules")), "node_modules itself is not walked");
  assert.ok(scan.folders.has(path.join(root, "node_modules/a/deep")), "what the link leads to is");
});

test("links that lead nowhere new cost no lookup: into walked folders, to files, and through each other", () => {
  const root = workspace();
  mkdirSync(path.join(root, "src/lib"), { recursive: true });
  // More than LINKS_LOOKED_UP, each settled from the listings: no error.
  for (let i = 0; i <= LINKS_LOOKED_UP; i++)
    symlinkSync(i % 2 === 0 ? "src/lib" : `missing-${i}`, path.join(root, `l${i}`));
  const scan = scanWorkspace(root, [], "strict");
  assert.deepEqual(scan.gitDirs, []);
});

test("more links than a box looks up: it refuses with what to do; the guard's walk follows them all", () => {
  const root = workspace();
  mkdirSync(path.join(root, "node_modules/d"), { recursive: true });
  mkdirSync(path.join(root, "l"));
  for (let i = 0; i <= LINKS_LOOKED_UP; i++) symlinkSync(`../node_modules/d/${i}`, path.join(root, `l/${i}`));
  mkdirSync(path.join(root, "node_modules/x/.git"), { recursive: true });
  symlinkSync("l/../node_modules/x", path.join(root, "zz")); // looked up (a `..`), last or not
  assert.throws(
    () => scanWorkspace(root, [], "strict"),
    new RegExp(`more than ${LINKS_LOOKED_UP} lead where its walk does not look .*Remove links you do not need`),
  );
  // Reviews g39 to g41: where the guard's walk stopped short, decoys hid a repository behind a link.
  const lenient = scanWorkspace(root, [], "lenient");
  assert.deepEqual(lenient.gitlinkErrors, []);
  assert.deepEqual(
    lenient.gitDirs.map((g) => path.relative(root, g)),
    ["node_modules/x/.git"],
  );
});

test("a link into more folders than latch walks: refused, naming the link", () => {
  const root = workspace();
  for (let i = 0; i <= LINKED_FOLDERS; i++)
    mkdirSync(path.join(root, `node_modules/p${i % 100}/f${i}`), { recursive: true });
  symlinkSync("node_modules", path.join(root, "nm"));
  assert.throws(
    () => scanWorkspace(root, [], "strict"),
    new RegExp(`the link \`nm\` leads: .*more than ${LINKED_FOLDERS} folders.*Remove the link`),
  );
});

test("a link named node_modules is one by name: not walked, so a large one refuses nothing (review g40)", () => {
  const root = workspace();
  for (let i = 0; i <= LINKED_FOLDERS; i++)
    mkdirSync(path.join(root, `node_modules/p${i % 100}/f${i}`), { recursive: true });
  mkdirSync(path.join(root, "web"));
  symlinkSync("../node_modules", path.join(root, "web/node_modules"));
  const scan = scanWorkspace(root, [], "strict");
  assert.ok(!scan.folders.has(path.join(root, "node_modules/p1")), "what it leads to is not walked");
});

test("a lookup goes step by step as the kernel does: through /proc by way of `/` is not followed for everyone", () => {
  const root = workspace();
  mkdirSync(path.join(root, "src"));
  symlinkSync("/", path.join(root, "src/d"));
  symlinkSync("d/proc/self/cwd/node_modules/a", path.join(root, "src/lib"));
  symlinkSync("../src/d/usr", path.join(root, "src/u")); // through the same link, elsewhere: fine
  const scan = scanWorkspace(root, [], "lenient");
  assert.deepEqual(
    scan.linksUnfollowed.map((k) => k.split("\0")),
    [[path.join(root, "src/lib"), "d/proc/self/cwd/node_modules/a"]],
  );
});

test("a link to a link named node_modules is looked up: where the user's `cd src` lands is judged", () => {
  const root = workspace();
  mkdirSync(path.join(root, "node_modules/x/.git"), { recursive: true });
  mkdirSync(path.join(root, "lib"));
  symlinkSync("../node_modules/x", path.join(root, "lib/node_modules")); // not followed by its own name
  symlinkSync("lib/node_modules", path.join(root, "src"));
  const scan = scanWorkspace(root, [], "lenient");
  assert.deepEqual(
    scan.gitDirs.map((g) => path.relative(root, g)),
    ["node_modules/x/.git"],
  );
});
