// The test runner's file list, found by folder: every test/**/*.test.ts. Files run side by side
// (LATCH_TEST_JOBS at once, by default twice the cores: most of a file's time is spent waiting on
// processes, fsyncs and sockets), the longest first; the few that cannot share the machine run after
// them, one at a time (SERIAL, each with its reason). `--stress` runs the stress files alone at their
// full counts: test/stress/** and every file whose loops LATCH_STRESS counts (test/helpers/stress.ts).
// `npm test` passes `--build --check`: `npm run build` first and `npm run check` beside the build and
// the files side by side (CHECK). `--times=FILE` keeps each file's times there (JSON lines). Any other
// arguments are file filters (substrings of the path), for running a part while working on it. At the
// end it prints each file's wall and CPU time (scripts/test-each-file.mjs) as TAP comments, and each
// failed test again with the top of its error (scripts/test-failures.mjs).
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { testEnv } from "./test-env.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const stressOnly = args.includes("--stress");
const build = args.includes("--build");
const check = args.includes("--check");
const keepTimes = args.find((a) => a.startsWith("--times="))?.slice("--times=".length);
const filters = args.filter((a) => !a.startsWith("--"));
const unknown = args.filter((a) => a.startsWith("--") && !/^--(stress|build|check|times=.+)$/.test(a));
if (unknown.length > 0) {
  console.error(
    `scripts/test.mjs: unknown option ${unknown.join(", ")} (known: --stress, --build, --check, --times=FILE)`,
  );
  process.exit(2);
}

const JOBS = Number(process.env.LATCH_TEST_JOBS ?? 2 * os.availableParallelism());
if (!Number.isInteger(JOBS) || JOBS < 1) {
  console.error(`scripts/test.mjs: LATCH_TEST_JOBS must be a whole number of at least 1, got ${JOBS}`);
  process.exit(2);
}

/**
 * Files that cannot share the machine, so they run alone after the rest, with the reason. No file
 * shares state with another: each keeps it in its own temp folders (fixtures, a state home per file:
 * test-each-file.mjs), listens on port 0, and tells its own processes and cgroups by a mark with its
 * pid (test/helpers/procs.ts, src/sandbox/cgroup.ts).
 */
const SERIAL = new Map([
  // CPU-bound work that must end within a product's time limit: alone, it has the cores a serial run
  // gave it. Side by side on a loaded machine (load 40-80) these failed.
  ["test/ast/outline.test.ts", "a 5,000-line outline must end within the default 5 s _ast_deadline"],
  ["test/ast/search.test.ts", "a 2,000-file search must end within the default 5 s _ast_deadline"],
  // A fork bomb takes every core until its 3 s timeout_ms: side by side it would eat the time limits
  // of the files beside it (and its own output's 5 s disclosure scan, which failed so under load).
  ["test/sandbox/cgroup-pool.test.ts", "runs a fork bomb (every core, up to 3 s)"],
  ["test/sandbox/processes.test.ts", "runs a fork bomb (every core, up to 3 s)"],
  // Ten contained process trees at once, each watched through /proc until all its processes stand:
  // side by side with the whole suite a tree twice did not stand within the call's 60 s (Node 20,
  // 2026-12-03), while it passed alone and in three other full runs.
  ["test/stress/process-tree.test.ts", "ten contained process trees at once, watched through /proc"],
  // ext4 gives a new folder the lowest free inode: a file beside it making folders took the one this
  // test frees and needs back (a CI run, 2026-12-07).
  ["test/sandbox/guard-watch-inode.test.ts", "needs a freed inode number back, which a file beside it can take"],
]);

/**
 * The longest files, longest first (their wall time on 2 cores, from the per-file times this script
 * prints): they start first, so that none of them starts last and runs on alone.
 */
const LONG_FIRST = [
  "test/sandbox/unreadable-folders.test.ts",
  "test/gateway/http.test.ts",
  "test/docs/blocks.test.ts",
  "test/cli/install.test.ts",
  "test/stress/shutdown.test.ts",
  "test/stress/state-faults.test.ts",
  "test/gateway/attach.test.ts",
  "test/stress/crash-steps.test.ts",
  "test/cli/log-runs.test.ts",
  "test/stress/sigkill-write.test.ts",
  "test/shell/background.test.ts",
  "test/cli/call.test.ts",
  "test/store/pg.test.ts",
  "test/stress/undo-exact.test.ts",
  "test/transports/approvals.test.ts",
  "test/stress/ledger-faults.test.ts",
  "test/fs/race.test.ts",
  "test/edit/stream-edit.test.ts",
  "test/gateway/pins.test.ts",
  "test/audit/decision-durable.test.ts",
  "test/tools/media.test.ts",
  "test/transports/http-concurrency.test.ts",
  "test/stress/concurrent-edits.test.ts",
  "test/stress/paths-property.test.ts",
  "test/transports/grep-runaway.test.ts",
  "test/stress/shell-exec.test.ts",
  "test/fs/odd-names.test.ts",
];

const all = readdirSync(path.join(REPO, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split(path.sep).join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();
// The stress run: test/stress/, and every other file with a loop whose count LATCH_STRESS sets (the
// race files through test/fs/race-fixture.ts, which times their races by it).
const loops = (f) => /LATCH_STRESS|helpers\/stress\.js|race-fixture\.js/.test(readFileSync(path.join(REPO, f), "utf8"));
let files = stressOnly ? all.filter((f) => f.startsWith("test/stress/") || loops(f)) : all;
if (filters.length > 0) files = files.filter((f) => filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`scripts/test.mjs: no test file matches ${filters.join(", ") || "test/**/*.test.ts"}`);
  process.exit(1);
}
const rank = (f) => (LONG_FIRST.includes(f) ? LONG_FIRST.indexOf(f) : LONG_FIRST.length);
const together = files.filter((f) => !SERIAL.has(f)).sort((a, b) => rank(a) - rank(b));
const alone = files.filter((f) => SERIAL.has(f));

const run = mkdtempSync(path.join(os.tmpdir(), "latch-test-run-"));
const times = path.join(run, "times.jsonl");
const env = testEnv(process.env, { run, times, stress: stressOnly });

// How the test files' TypeScript is run. By default (LATCH_TEST_LOADER unset or "bundle") each file is
// bundled with the src/ and test/ modules it imports (bundleFiles, below) and runs with no module hooks:
// Node 20 runs hooks on a thread of their own, and each of a file's ~250 imports crossed to it and back,
// 0.3-0.4 s of CPU per file (27 s against 20 s, bundling included, over the 19 files of test/policy,
// test/config and test/edit), ~65 s over the suite, whose side-by-side files keep both cores busy.
// LATCH_TEST_LOADER=hooks runs them through scripts/ts-loader.mjs as before, and =tsx under tsx, to
// compare or to rule the bundle out.
const MODE = process.env.LATCH_TEST_LOADER || "bundle";
if (!["bundle", "hooks", "tsx"].includes(MODE)) {
  console.error(`scripts/test.mjs: LATCH_TEST_LOADER must be bundle, hooks or tsx, got ${MODE}`);
  process.exit(2);
}
const LOADER = MODE === "tsx" ? "tsx" : "./scripts/ts-loader.mjs";

/**
 * Each test file as one ES module (with the src/ and test/ modules it imports; code two files share in
 * chunks beside them, packages left to Node), in a folder under node_modules/.cache so the packages
 * resolve as from the repository. esbuild strips the types as scripts/ts-loader.mjs does, and
 * `import.meta.url` and `import.meta.dirname` keep naming each module's own source file, so fixtures,
 * workers and helpers found beside it are found as before. Source maps (inline, `--enable-source-maps`)
 * give failures and stacks their .ts files and lines. Returns the bundle of each file, or undefined
 * when esbuild fails (a file that does not compile): the run then goes through the hooks, which fail
 * just that file.
 */
async function bundleFiles(list, dir) {
  // Node 22 and later take --test's arguments as globs, which skip node_modules when relative: the
  // bundles are passed by absolute path, so a glob character in it would make them not found.
  if (Number(process.versions.node.split(".")[0]) >= 21 && /[*?[\]{}()!+@\\]/.test(dir)) {
    console.error(`scripts/test.mjs: ${dir} holds a glob character; running the test files through the module hooks`);
    return undefined;
  }
  const { build } = await import("esbuild");
  const meta = { "import.meta.url": "__latchSourceUrl", "import.meta.dirname": "__latchSourceDir" };
  try {
    await build({
      entryPoints: list.map((f) => path.join(REPO, f)),
      outdir: dir,
      outbase: REPO,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "es2022",
      tsconfigRaw: {}, // as scripts/ts-loader-hooks.mjs's transform: no tsconfig option changes the output
      packages: "external",
      sourcemap: "inline",
      sourcesContent: false,
      logLevel: "silent", // its errors are printed below
      define: meta,
      plugins: [
        {
          name: "latch-source-meta",
          setup(b) {
            // `./x.js` written in a .ts file means `./x.ts` when that exists (as in scripts/ts-loader-hooks.mjs).
            b.onResolve({ filter: /^\.{1,2}\/.*\.js$/ }, (a) => {
              if (!a.importer.endsWith(".ts")) return undefined;
              const ts = path.resolve(a.resolveDir, `${a.path.slice(0, -3)}.ts`);
              return existsSync(ts) ? { path: ts } : undefined;
            });
            // Each module's own source file, on its first line (its lines keep their numbers).
            b.onLoad({ filter: /\.(ts|mts|cts|js|mjs|cjs)$/ }, (a) => {
              const own =
                `const __latchSourceUrl = ${JSON.stringify(pathToFileURL(a.path).href)}; ` +
                `const __latchSourceDir = ${JSON.stringify(path.dirname(a.path))}; `;
              const source = readFileSync(a.path, "utf8");
              const at = source.startsWith("#!") ? source.indexOf("\n") + 1 : 0; // after a #! line
              return {
                contents: source.slice(0, at) + own + source.slice(at),
                loader: /\.[mc]?ts$/.test(a.path) ? "ts" : "js",
              };
            });
          },
        },
      ],
    });
  } catch (err) {
    console.error(
      `scripts/test.mjs: bundling the test files failed; running them through the module hooks\n${err.message}`,
    );
    return undefined;
  }
  return new Map(list.map((f) => [f, path.join(dir, f.replace(/\.ts$/, ".mjs"))]));
}

const started = performance.now();
let status = 0;

/**
 * `npm run check` (prettier, tsc, eslint, knip): about 80 s of CPU, nearly all of it on one core, and
 * none of it needs the build or the tests. Run before them, it left a core idle for a minute; beside
 * the build and the files side by side it fills the time those spend waiting. It ends before the files
 * that run alone start, so they keep the machine to themselves. Its output goes to a file and is
 * printed at the end, after the files' TAP.
 */
let checked;
let checker;
if (check) {
  const log = path.join(run, "check.log");
  const since = performance.now();
  const child = (checker = spawn("npm", ["run", "check", "--silent"], {
    cwd: REPO,
    stdio: ["ignore", openSync(log, "w"), openSync(log, "a")],
  }));
  checked = new Promise((resolve) => {
    child.on("error", (err) => resolve({ ok: false, out: `could not start npm run check: ${err.message}\n`, s: 0 }));
    child.on("close", (code, signal) =>
      resolve({
        ok: code === 0,
        out:
          readFileSync(log, "utf8") + (code === 0 ? "" : `npm run check ended with ${signal ?? `exit code ${code}`}\n`),
        s: (performance.now() - since) / 1000,
      }),
    );
  });
}
if (build) {
  const built = spawnSync("npm", ["run", "build", "--silent"], { cwd: REPO, stdio: "inherit" });
  if (built.status !== 0) {
    console.error(
      `scripts/test.mjs: npm run build failed (${built.error?.message ?? `exit code ${built.status}`}); no test ran`,
    );
    checker?.kill();
    process.exit(built.status || 1);
  }
}
const builtAt = performance.now();
// The bundles' folder: removed with the run's at the end.
const cache = path.join(REPO, "node_modules/.cache");
if (MODE === "bundle") mkdirSync(cache, { recursive: true });
const bundleDir = MODE === "bundle" ? mkdtempSync(path.join(cache, "latch-test-files-")) : undefined;
const bundles = bundleDir ? await bundleFiles([...together, ...alone], bundleDir) : undefined;
/** A bundle's path back to its test file's (the per-file times name the file). */
const unbundled = new Map([...(bundles ?? [])].map(([f, b]) => [path.relative(REPO, b).split(path.sep).join("/"), f]));

let checkResult;
/** Each pass's failures, one file a pass (a reporter's destination is written afresh). */
const failureLogs = [];
for (const [list, jobs] of [
  [together, JOBS],
  [alone, 1],
]) {
  if (list === alone && checked) checkResult = await checked;
  if (list.length === 0) continue;
  const failuresLog = path.join(run, `failures-${failureLogs.length}.log`);
  failureLogs.push(failuresLog);
  // Not spawnSync: the check's end must be seen (and timed) while the files run.
  const pass = spawn(
    process.execPath,
    [
      ...(bundles ? ["--enable-source-maps"] : ["--import", LOADER]),
      "--import",
      "./scripts/test-each-file.mjs",
      "--test",
      `--test-concurrency=${jobs}`,
      "--test-reporter=tap",
      "--test-reporter-destination=stdout",
      "--test-reporter=./scripts/test-failures.mjs",
      `--test-reporter-destination=${failuresLog}`,
      ...list.map((f) => bundles?.get(f) ?? f),
    ],
    { cwd: REPO, stdio: "inherit", env },
  );
  const code = await new Promise((resolve) => pass.on("close", (c) => resolve(c ?? 1)));
  if (code !== 0) status = code;
}
const wallS = (performance.now() - builtAt) / 1000;

// No times file: no test file ran to its end (each failed to load), and the TAP above says why.
const rows = existsSync(times)
  ? readFileSync(times, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l))
      .map((r) => ({ ...r, file: unbundled.get(r.file) ?? r.file }))
  : [];
rows.sort((a, b) => b.wallMs - a.wallMs);
const sum = (k) => rows.reduce((s, r) => s + r[k], 0) / 1000;
console.log(
  `# ${rows.length} files in ${wallS.toFixed(0)} s (${together.length} side by side, ${JOBS} at once; ${alone.length} alone)`,
);
console.log(
  `# per file, summed: wall ${sum("wallMs").toFixed(0)} s, CPU ${sum("cpuMs").toFixed(0)} s (with its processes)`,
);
for (const r of rows.slice(0, 15))
  console.log(
    `#   ${(r.wallMs / 1000).toFixed(1).padStart(6)} s wall ${(r.cpuMs / 1000).toFixed(1).padStart(6)} s CPU  ${r.file}`,
  );
if (checkResult) {
  process.stdout.write(checkResult.out);
  console.log(
    `# npm run check: ${checkResult.ok ? "ok" : "FAILED"} in ${checkResult.s.toFixed(0)} s, beside the files`,
  );
  if (!checkResult.ok && status === 0) status = 1;
}
const failed = failureLogs
  .filter((f) => existsSync(f))
  .map((f) => readFileSync(f, "utf8"))
  .join("")
  // A bundle's path back to its test file's.
  .replace(/\S+\.mjs/g, (b) => unbundled.get(path.relative(REPO, b).split(path.sep).join("/")) ?? b)
  .replaceAll(REPO + path.sep, "")
  .trimEnd();
if (failed !== "") console.log(`# failed:\n${failed.replace(/^/gm, "#   ")}`);
if (build || check)
  console.log(`# in all ${((performance.now() - started) / 1000).toFixed(0)} s with the build and the check`);
if (keepTimes && existsSync(times))
  writeFileSync(path.resolve(keepTimes), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
rmSync(run, { recursive: true, force: true });
if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
process.exit(status);
