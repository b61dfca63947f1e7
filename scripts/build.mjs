// `npm run build`: tsc into dist/, then scripts/bundle.mjs (the bundled command, its code cache). A dist/
// built from the same inputs by the same Node is kept as it is: `npm ci` builds through `prepare` and
// `npm test` builds again, and the second build (15 s of 2 cores' CI time) made the same bytes.
// `--force` builds whatever the stamp says.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inputsDigest } from "./build-inputs.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--force");
if (unknown.length > 0) {
  console.error(`scripts/build.mjs: unknown argument ${unknown.join(", ")} (known: --force)`);
  process.exit(2);
}

// What a finished build leaves: the library, the command, and the stamp written last.
const OUTPUTS = ["dist/index.js", "dist/cli/main.js", "dist/cli/program.cjs"];
const stamp = path.join(repo, "dist/.build-inputs");

const digest = inputsDigest(repo);
const current =
  !args.includes("--force") &&
  OUTPUTS.every((f) => existsSync(path.join(repo, f))) &&
  existsSync(stamp) &&
  readFileSync(stamp, "utf8").trim() === digest;
if (current) {
  console.log("latch build: dist/ is current (built from these inputs by this Node); --force builds it again");
  process.exit(0);
}

// A build that stops halfway leaves no stamp, so the next one builds whole.
rmSync(stamp, { force: true });
const steps = [
  [path.join(repo, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
  [path.join(repo, "scripts/bundle.mjs")],
];
for (const argv of steps) {
  const r = spawnSync(process.execPath, argv, { cwd: repo, stdio: "inherit" });
  if (r.status !== 0) {
    console.error(
      `scripts/build.mjs: ${path.basename(argv[0])} failed (${r.error?.message ?? (r.signal ? `signal ${r.signal}` : `exit code ${r.status}`)})`,
    );
    process.exit(r.status || 1);
  }
}
writeFileSync(stamp, `${digest}\n`);
