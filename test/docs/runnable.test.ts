// Every ```sh block marked `<!-- runnable -->` in README.md and docs/*.md runs as written. Each line of the
// block runs in bash, in order, in a fresh workspace with a README.md, with `latch` on the PATH as the built
// CLI (npm test builds first) and HOME and the state folder in a temp dir; every line must exit 0. The other
// blocks (TypeScript, TOML, JSON, and why some are not run) are in blocks.test.ts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { docBlocks, latchBin, PAGES } from "./blocks.js";

const blocks = docBlocks().filter((b) => b.lang === "sh" && b.mark === "runnable");
const fx = makeFixture("latch-docs-");
after(() => fx.cleanup());

test("the docs mark their command examples runnable (this test has something to run)", () => {
  assert.ok(blocks.length >= 3, `found ${blocks.length} runnable blocks in ${PAGES.join(", ")}`);
});

for (const [i, { page, code }] of blocks.entries()) {
  test(`${page}: runnable block ${i + 1} runs as written`, () => {
    const bin = latchBin(fx.base);
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
