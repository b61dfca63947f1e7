// What a V8 startup snapshot of the program would give `latch mcp`'s start (issue 32: "spawn to the
// first tools/list ≤ 2× `node -e 0`"), measured, not shipped. The build's program.cjs is evaluated
// in `node --build-snapshot` and the heap written to a blob; `node --snapshot-blob BLOB mcp ...` then
// starts with the program's modules already evaluated, and runs runProgram. Node 20's snapshot
// builder cannot load node:http and warns that child_process, net, zlib and others are not verified
// there, so those are handed to the program as stand-ins that load the real module at first use.
// Only the start to the first tools/list is measured: a shipped snapshot would need a launcher that
// passes --snapshot-blob (a client runs `latch`), a blob per Node version, and a check of every
// module's state frozen at build time. The commands take turns, round by round.
// Usage: npm run build && node --import tsx bench/start-snapshot.ts [--rounds N] [--no-write]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { measuredLine, median, noiseNote, publish, REPO, thisTree, watchLoad } from "./report.js";
import { ENV, type Sample, timedExit, timedStart } from "./spawn-timing.js";

const argv = process.argv.slice(2);
const ROUNDS = Number(argv.includes("--rounds") ? argv[argv.indexOf("--rounds") + 1] : 15);
const CLI = path.join(REPO, "dist/cli");

/** The builtins the program gets as stand-ins in the builder, with their export names for the bundle's __toESM. */
const DEFERRED = ["http", "https", "tls", "net", "dns", "dns/promises", "http2", "zlib", "child_process"];
const DEFERRED_KEYS = Object.fromEntries(
  DEFERRED.map((id) => [id, Object.keys(createRequire(import.meta.url)(`node:${id}`) as object)]),
);

/** The script `node --build-snapshot` runs: the program evaluated, runProgram as the snapshot's main. */
const builder = `"use strict";
const { readFileSync } = require("node:fs");
const Module = require("node:module");
const vm = require("node:vm");
const v8 = require("node:v8");
const dir = ${JSON.stringify(CLI)};
const bundle = dir + "/program.cjs";
const deferredKeys = ${JSON.stringify(DEFERRED_KEYS)};
let real; // the program's require at run time, set by the main function
const standIn = (id) => {
  let mod;
  const load = () => (mod ??= real("node:" + id));
  return new Proxy({}, {
    get: (_, k) => load()[k],
    has: (_, k) => k in load(),
    ownKeys: () => (real ? Reflect.ownKeys(load()) : deferredKeys[id]),
    getOwnPropertyDescriptor: (_, k) => ({ configurable: true, enumerable: true, get: () => load()[k] }),
  });
};
const req = (id) => {
  const bare = id.replace(/^node:/, "");
  if (bare in deferredKeys) return standIn(bare);
  if (real) return real(id);
  return require(id); // a builtin, or a throw naming what the program needs at load
};
req.resolve = (id, options) => real.resolve(id, options);
const init = vm.runInThisContext(Module.wrap(readFileSync(bundle, "latin1")), { filename: bundle });
const mod = { exports: {} };
init(mod.exports, req, mod, bundle, dir);
v8.startupSnapshot.setDeserializeMainFunction(async () => {
  real = Module.createRequire(bundle);
  await mod.exports.runProgram([process.argv[0], dir + "/main.js", ...process.argv.slice(1)], undefined);
});
`;

const NOTES = `**What it shows** (issue 32: \`latch mcp\` to the first tools/list ≤ 2× \`node -e 0\`): a snapshot takes the program's load off a start (\`help\` ~0.7× the build's), not the rest. Node's start with the program's heap, then commander's help, is already ~2.3× \`node -e 0\`, and \`latch mcp\` to its first tools/list ~2.9×: the heap's ~20 ms of deserialising replace the code cache's load and the modules' top level (~40 ms), and the functions a start runs then compile afresh (no code cache comes with a snapshot for code its builder never ran). A scratch copy of the builder writing \`performance.now()\` when its main function began put that at 42–46 ms after the process began (Node's own start ~23 ms), against 66–68 ms for the build's program loaded (15 starts each, 2026-12-05 04:50 UTC). Node 22.23.5 and 24.22.3, from the fresh clones of \`scripts/node-versions.sh\` (this script copied in, run with that Node first on PATH, \`--rounds 11 --no-write\`, 05:03 UTC): \`latch mcp\` 3.32× and 3.21× \`node -e 0\`, from the snapshot 2.88× and 2.98× (0.89× and 0.90× the build's start). So ≤ 2× is out of reach with a snapshot too, on each Node; and shipping one would need a launcher that passes \`--snapshot-blob\` (a client runs \`latch\`, not node with flags), a blob per Node version, and every module's state at load checked for what it froze at build time (the environment, the cwd, the home directory). Not shipped.`;

async function main(): Promise<void> {
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-snapshot-"));
  const blob = path.join(base, "latch.blob");
  const script = path.join(base, "build-snapshot.cjs");
  writeFileSync(script, builder);
  const built = spawnSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", script], {
    env: ENV,
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`the snapshot was not built: ${built.stderr.slice(-1500)}`);
  const blobMb = (statSync(blob).size / 1e6).toFixed(1);
  const load = watchLoad();
  const runs: Record<string, Sample[]> = { node: [], help: [], snapHelp: [], latch: [], snap: [] };
  try {
    for (let r = 0; r <= ROUNDS; r++) {
      const root = mkdtempSync(path.join(base, "ws-"));
      const got: Record<string, Sample> = {
        node: await timedExit(["-e", "0"]),
        help: await timedExit([path.join(CLI, "main.js"), "help"]),
        snapHelp: await timedExit(["--snapshot-blob", blob, "help"]),
        latch: await timedStart(
          [path.join(CLI, "main.js"), "mcp", "--root", root, "--state-dir", path.join(base, `st-${r}`)],
          () => undefined,
        ),
        snap: await timedStart(
          ["--snapshot-blob", blob, "mcp", "--root", root, "--state-dir", path.join(base, `sn-${r}`)],
          () => undefined,
        ),
      };
      if (r > 0) for (const k of Object.keys(runs)) runs[k].push(got[k]); // round 0 warms the page cache
    }
  } finally {
    load.stop();
    rmSync(base, { recursive: true, force: true });
  }
  const med = (k: string) => median(runs[k].map((s) => s.wall));
  const paired = (a: string, b: string) => median(runs[a].map((s, i) => s.wall / runs[b][i].wall)).toFixed(2);
  const row = (name: string, k: string) =>
    `| ${name} | ${med(k).toFixed(0)} | ${median(runs[k].map((s) => s.cpu)).toFixed(0)} | ${paired(k, "node")} |`;
  const body = [
    measuredLine(
      `node --import tsx bench/start-snapshot.ts --rounds ${ROUNDS}`,
      load,
      ` (after \`npm run build\`, at ${thisTree()})`,
    ),
    noiseNote(load),
    "",
    `The program (dist/cli/program.cjs) evaluated by \`node --build-snapshot\` into a ${blobMb} MB blob; Node 20's snapshot builder cannot load node:http (\`methods.toSorted is not a function\`), so ${DEFERRED.join(", ")} are stand-ins there that load the real module at first use. Each round runs the five in turn, a warm-up round first; ${ROUNDS} rounds, medians, every command without NODE_EXTRA_CA_CERTS (bench/spawn-timing.ts). Wall: spawn to exit, or to the first tools/list answer.`,
    "",
    "| command | wall (ms) | CPU (ms) | wall ÷ `node -e 0`, per round |",
    "|---|---|---|---|",
    row("`node -e 0`", "node"),
    row("`latch help` (the program loaded, commander's help)", "help"),
    row("`node --snapshot-blob BLOB help` (Node's start with the program's heap, then the same)", "snapHelp"),
    row("`latch mcp` to the first tools/list (the build: program.cjs with its code cache)", "latch"),
    row("`node --snapshot-blob BLOB mcp` to the first tools/list", "snap"),
    "",
    `The snapshot's start ÷ the build's, per round: \`help\` ${paired("snapHelp", "help")}, \`mcp\` ${paired("snap", "latch")}.`,
  ].join("\n");
  publish(
    "start-snapshot",
    "Start-up from a V8 startup snapshot of the program (measured, not shipped)",
    body + "\n\n" + NOTES,
  );
}

await main();
