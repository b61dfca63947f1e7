// Every code block marked runnable in README.md and docs/*.md runs as written: a `<!-- runnable -->`
// line right before a ```sh block. Each line of the block runs in bash, in order, in a fresh workspace
// with a README.md, with `latch` on the PATH as the built CLI (npm test builds first) and HOME and the
// state folder in a temp dir; every line must exit 0.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const pages = ["README.md", ...readdirSync(path.join(REPO, "docs")).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith(".md"),
);

function runnableBlocks(page: string): string[] {
  const text = readFileSync(path.join(REPO, page), "utf8");
  return [...text.matchAll(/<!-- runnable -->\n```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

const blocks = pages.flatMap((page) => runnableBlocks(page).map((code) => ({ page, code })));
const fx = makeFixture("latch-docs-");
after(() => fx.cleanup());

test("the docs mark their command examples runnable (this test has something to run)", () => {
  assert.ok(blocks.length >= 3, `found ${blocks.length} runnable blocks in ${pages.join(", ")}`);
});

for (const [i, { page, code }] of blocks.entries()) {
  test(`${page}: runnable block ${i + 1} runs as written`, () => {
    const bin = path.join(fx.base, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, "latch"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(path.join(bin, "latch"), 0o755);
    fx.write({ "README.md": "# latch demo\n", "src/index.ts": "export const x = 1;\n" });
    const home = path.join(fx.base, `home-${i}`);
    mkdirSync(home, { recursive: true });
    const env = { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: home, LANG: "C.UTF-8" };
    for (const line of code.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim())) {
      if (line === "" || line.startsWith("#")) continue;
      try {
        execFileSync("bash", ["-c", line], { cwd: fx.root, env, stdio: "pipe", timeout: 60_000 });
      } catch (err) {
        const e = err as { status?: number; stderr?: Buffer; stdout?: Buffer };
        assert.fail(`\`${line}\` exited ${e.status}: ${e.stderr?.toString() ?? ""}${e.stdout?.toString() ?? ""}`);
      }
    }
  });
}
