// What the guard's look at a git index costs each walk (src/sandbox/gitlinks.ts, git-index.ts): a
// repository whose index holds ENTRIES entries (~100 bytes each, made with `git update-index
// --index-info`, no files), checked again unchanged, as every walk after the first does; and the same
// index made 3.2 GB by two optional extensions of zeros (sparse), which git skips.
// Usage: node --import tsx bench/index-read.ts [--entries N] [--checks N] [REPO ...]   (default: this
// checkout; pass a checkout of the commit before, e.g. from `git archive`, to compare: each is
// imported in turn in this one process)
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync, ftruncateSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { flagsAndTrees } from "./report.js";

const {
  flags: { entries: ENTRIES, checks: CHECKS },
  trees: repos,
} = flagsAndTrees({ entries: 400_000, checks: 10 });

const base = mkdtempSync(path.join(os.tmpdir(), "latch-index-read-"));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base };

/** A repository whose index holds `n` entries and a gitlink; `huge`: then two extensions of zeros. */
function repo(name: string, n: number, huge: boolean): string {
  const dir = path.join(base, name);
  execFileSync("git", ["init", "-q", dir], { env });
  const blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
  let lines = "";
  for (let i = 0; i < n; i++) lines += `100644 ${blob}\tsrc/dir${Math.floor(i / 100)}/some-file-name-${i}.txt\n`;
  lines += `160000 ${blob}\tnode_modules/x\n`;
  execFileSync("git", ["update-index", "--index-info"], { cwd: dir, env, input: lines });
  execFileSync("git", ["init", "-q", path.join(dir, "node_modules/x")], { env });
  if (huge) {
    const file = path.join(dir, ".git/index");
    const plain = readFileSync(file).subarray(0, -20);
    const size = 1_600_000_000;
    const ext = Buffer.alloc(8);
    ext.write("ZZZZ", 0, "latin1");
    ext.writeUInt32BE(size, 4);
    const fd = openSync(file, "w");
    writeSync(fd, plain);
    for (const at of [plain.length, plain.length + 8 + size]) writeSync(fd, ext, 0, 8, at);
    ftruncateSync(fd, plain.length + 2 * (8 + size) + 20); // a null checksum: git does not check it
    closeSync(fd);
  }
  return dir;
}

const cases = [
  { name: `${ENTRIES} entries`, dir: repo("plain", ENTRIES, false) },
  { name: "1,000 entries, 3.2 GB sparse", dir: repo("huge", 1000, true) },
];
try {
  for (const r of repos) {
    const { beyondTheWalk } = (await import(
      path.join(r, "src/sandbox/gitlinks.ts")
    )) as typeof import("../src/sandbox/gitlinks.js");
    for (const c of cases) {
      const ms: number[] = [];
      let said = "";
      for (let i = 0; i <= CHECKS; i++) {
        const t = process.hrtime.bigint();
        const found = beyondTheWalk(c.dir, [], [], false);
        if (i > 0) ms.push(Number(process.hrtime.bigint() - t) / 1e6);
        said = found.errors.length > 0 ? `error: ${found.errors[0].slice(0, 80)}` : `${found.dirs.length} gitlinked`;
      }
      ms.sort((a, b) => a - b);
      console.log(
        JSON.stringify({
          repo: r,
          case: c.name,
          first_check_excluded: true,
          median_ms: +ms[ms.length >> 1].toFixed(1),
          found: said,
        }),
      );
    }
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
