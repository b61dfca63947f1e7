// Start-up, side by side in one run (issue 32): `node -e 0` (the floor), `latch --version`, and
// `latch mcp` spawned to its first tools/list answer against the reference MCP filesystem server
// (@modelcontextprotocol/server-filesystem) the same way. The four take turns, round by round, so a
// busy moment of the machine falls on all alike. Each figure: wall ms from spawn (to exit, or to the
// tools/list answer), and CPU ms of the process (its rusage through /usr/bin/time for the two that
// exit; for the servers, every thread's time on a CPU at the answer, /proc/PID/task/*/schedstat).
// Usage: npm run build && node --import tsx bench/start.ts [--rounds N] [--before DIR] [--no-write]
// --before DIR: also an earlier build (a checkout of another commit, built), in the same rounds.
// Writes its table between the start markers in bench/RESULTS.md.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { measuredLine, median, noiseNote, publish, REPO, thisTree, watchLoad } from "./report.js";
import { type Sample, timedExit, timedStart } from "./spawn-timing.js";

const LATCH = path.join(REPO, "dist/cli/main.js");
const PEER = path.join(REPO, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const argv = process.argv.slice(2);
const ROUNDS = Number(argv.includes("--rounds") ? argv[argv.indexOf("--rounds") + 1] : 15);
const BEFORE = argv.includes("--before") ? path.resolve(argv[argv.indexOf("--before") + 1]) : undefined;
const BEFORE_CLI = BEFORE && path.join(BEFORE, "dist/cli/main.js");

const NOTES = `**Where the time went** before session 32's changes (\`node --cpu-prof\` of \`latch mcp\` to its first tools/list, shares): loading the program ~40% (about half of it V8 compiling ~1.2 MB afresh: Node 20 keeps no compile cache, and 22's \`module.enableCompileCache()\` caches only what compiles before the code runs, a few ms); createHost ~15% (\`latch.db\` opened and migrated, the bwrap probe, the served roots); tools/list ~35% (the skill index as a whole \`skill\` call through the pipeline).

**What changed** (issue 32): \`--version\`, and \`--help\` into a pipe, are answered by the entry alone. Since 711f3b8 every start had also loaded the gateway (the MCP client, the OpenAPI parser, Ajv: ~500 KB, ~40 ms of CPU); it now loads only for a config that attaches a server. The build writes the program a second time as one CommonJS script (\`program.cjs\`), runs a training \`latch mcp\` to its first tools/list and a read, and keeps V8's code of every function that run compiled (\`program.cjs.<node>-<arch>.cache\`); the entry runs the script through \`vm.Script\` with it (src/cli/code-cache.ts), on the Node that built it (another Node loads the ES module chunks, with Node's compile cache): about 30% less CPU per start. tools/list runs no \`skill\` call where no skill folder exists (a stat each; one appearing later is listed at the next tools/list). Then: \`program.cjs\` is ASCII (one \`…\` in a regex literal had made all 3 MB a two-byte string; the build now fails on a non-ASCII byte) and read as latin1; better-sqlite3's JavaScript is bundled (in the code cache) and its addon required from \`build/Release\` (its ~15 files and \`bindings\`' stack-trace search cost ~5 ms); the entry starts the sandbox probe's bwrap run before loading the program, and the host adopts it (src/sandbox/probe-run.ts: bwrap runs on the other core meanwhile); a new \`latch.db\` takes \`synchronous = NORMAL\` before its switch to WAL (one fsync less). Since session 32's last stop the MCP transports are imported in \`latch mcp\`'s action (src/cli/mcp.ts): \`latch call\`, \`tools\` and \`explain\` no longer evaluate the MCP SDK (its types.js, ~8 ms of each of their starts; test/cli/lazy-loads.test.ts holds the program's static imports to that); \`latch mcp\` loads it as before. Since 0e758ea no zod schema is made while the program loads unless a start uses it: agents.toml's (the file's, the envelope and server tables: \`z.lazy\`, built at the first file parsed) and the tools' argument schemas (\`defineTool\` takes a function that makes one, called at the tool's first argument check; tools/list sends the JSON Schemas the build computed). The program's top level fell from 36 to 28 ms (medians of 9 loads of an instrumented, unminified program.cjs with its own code cache, each module's own time apart); \`latch call\` 0.91–0.93× and \`latch mcp\` 0.95–0.97× the build before (0e758ea) in three runs of 15 rounds. Since 26ba152 \`latch mcp\` over stdio answers the client's first initialize and tools/list before it loads the MCP SDK (src/transports/mcp/early.ts: plain messages checked by hand, the same answers as the SDK's Server, test/transports/early-answers.test.ts); the SDK loads right after, takes in the initialize and serves what came meanwhile. Marks in the process before that change (033ed0f with \`performance.now()\` marks on stderr, the state dir kept, medians of 15 starts, load ~1, 02:51 UTC) put the SDK's part of the first answers at ~14 ms: the program loaded and the action running at 67.5 ms after the process began, importing the stdio transport and with it the SDK 8.9 ms, createHost 10.6, the session and its connect 3.4, then 2.8 ms from reading initialize to answering it (the wire's and the SDK's zod checks, compiling their fast paths first) and 1.2 for tools/list; spawn to the tools/list answer 97.7 ms at 033ed0f against 83.5 with the change (15 starts each, a scratch script, the same minute). Since afb4f2f the stdio server also runs the sandbox probe after those answers (its shell calls wait for it; since 9b9d753 no other call does), where the entry had started it before the program loaded: with bwrap on PATH the start took ~6 ms more than without (85.6 against 79.3 ms, 21 starts in turns: the spawn on the main thread, bwrap beside the program's load on 2 cores, ~2 ms waiting for its exit); after, 77.6 with and 77.8 without, against 84.1 for a build that started it at the entry and did not wait.

**Node's own start, corrected** (2026-12-05): this workplace sets \`NODE_EXTRA_CA_CERTS\` (the system's 220 KB CA bundle), and Node 20 parses that file at every start, before any code runs: \`node -e 0\` took 60 ms with it and 24 ms without it (21 starts each); Node 22.23.5 and 24.22.3 take 23–26 ms either way (they read it at the first TLS connection). Every start figure in this section before that date, and the issue's own (\`node -e 0\` 50 ms), carried those ~36 ms in \`node -e 0\`, in latch and in the peer alike, which drew the ratios to \`node -e 0\` toward 1: \`latch mcp\` was 2.4–2.5× \`node -e 0\` with the variable, and is ~4.5× without it, on each Node (\`env -u NODE_EXTRA_CA_CERTS node --import tsx bench/start.ts --rounds 11 --no-write\`, 2026-12-05 00:10 UTC: Node 20 114 against 25 ms, 4.65×, 0.58 of the peer; and in the fresh clones of \`scripts/node-versions.sh\`, each built by its own Node with its own code cache, the same command from the clone with that Node first on PATH: Node 22 113 against 25 ms, 4.51×, 0.68 of the peer; Node 24 110 against 25 ms, 4.43×, 0.64 of the peer). Since then the bench runs every command without the variable, as a user's machine does.

**Where the time goes now** (marks in the process, not profiled, a fresh state dir, median of 15 starts, load 3.7 on 2 cores, with the variable above: subtract its ~36 ms from Node's own start): Node's own start to the entry 53 ms (\`node -e 0\` is ~50 ms to exit; an ES module entry costs ~5 ms more than a CommonJS one); the bwrap probe's spawn 4 ms (child_process loaded, and the fork); the program's load 45 ms (reading 3 MB of script and 1.5 MB of cache ~4 ms, V8 deserialising the cache ~8 ms, the top level ~33 ms; timed module by module with the cache, each module's own init adds up to 26 ms of it: the MCP SDK's types.js 6.3 (its protocol's zod schemas), src/fs 3.7 (node:crypto's load 1.3, the quarantine's picomatch globs 1.0), src/tools 2.9 for all 28 tools, src/config 2.4 (zod schemas), zod itself 2.0, src/web/fetch.ts 1.9 (http, https, tls, zlib and dns loaded at import), src/net/address.ts 1.9 (30 net.BlockList made at import), commander 1.3; the rest is GC and the bundle's own top level)); createHost 17 ms (the config and settings 3.6; a new \`latch.db\` 8.3, five fsyncs on a shared disk, ~2 for an existing one; 2 waiting for bwrap's exit); the MCP session, initialize and tools/list 6 ms (mostly zod checking each message twice, the wire's check and the SDK's). A CPU profile to the answer, in shares: the modules' top level 28%, the cache's deserialisation 13%, GC 10%, the bwrap spawn 7%, \`latch.db\` 6%, serving 6%.

**Tried, not kept**: training the cache only to tools/list (1.42 MB instead of 1.55): no difference in 2 × 9 starts. zod without its compiled fast path (\`jitless\`): 1.4% less wall and 2.5% less CPU at start, but every later call's argument check loses it. A CommonJS entry (\`bin\` → a \`main.cjs\`): 0.965× the wall in 15 paired starts (~5 ms) at first; built whole on 2026-12-04 (a \`dist/cli/bin.cjs\` running program.cjs with the cache, handing over to main.js without it), it gave \`--version\` 0.915× (30 paired runs of farm-bench) but \`latch mcp\` to the first tools/list 0.99–1.00× (21 and 31 paired rounds): not kept. Opening \`latch.db\` after the first answer: not done, since an unusable database must still stop \`latch mcp\` before it serves.

**A later start** (issue 32, 2026-12-05): a client starts \`latch mcp\` with the same arguments in the same workspace at every session, and such a start now answers initialize and tools/list before its program loads, from the answers the last such start kept in its state dir (src/transports/mcp/answer-cache.ts, row "a later start in the same workspace"). The entry (src/cli/main.ts) makes the start's key (sha256 of latch's version, program.cjs's stamp, the arguments, the folder and the whole environment), checks that the state dir and latch.db can be written and that each file the answers came from has the stamp it had (the config file, the policy programs and the seal key by content; the roots as given and as resolved, and every place a skill folder may be, by which folder it is), then reads fd 0 for at most 20 ms for a plain initialize and 25 ms more for a plain tools/list; what else it read goes to the program with fd 0 itself (src/transports/mcp/stdin-reader.ts). The program then makes its own answers: tools that differ send notifications/tools/list_changed, instructions that differ a line on stderr, and either way its own are kept for the next start (test/transports/answer-cache.test.ts plants an answer only the kept file holds, to show each way). A first start in a workspace, or the first after its config, roots or skill folders changed, is the row \`latch mcp\` above; a start with a skill folder, attached servers or a \`--policy-log\` file keeps nothing (a skill index is a logged call; the servers' tools are theirs; a log file is never appended to, so a later start is refused). The trade-off: a latch.db that became unusable in a way \`access(2)\` does not show (a full disk) is found after those two answers, and latch stops then, at once (exit 1, the reason on stderr), where a start without kept answers stops before answering. The run before this one (03:40 UTC the same day, on a machine whose Node started ~3× faster: \`node -e 0\` 23 ms) had \`latch mcp\` at 82 ms, 3.65× \`node -e 0\` and 0.45 of the peer; on this day's slower machine the same start is 3.3× and 0.68: compare rows within a run.

**A plain first start** (issue 32, 2026-12-05): \`latch mcp --root DIR\` (and at most \`--state-dir\`) with no config file, no skill folder and none of the variables that change the tools (src/transports/mcp/plain-start.ts names each variable latch reads, as shaping the answers, a place it checks, or neither; a test holds src/ to that list) answers initialize and tools/list like every other such start but for the root in the instructions. The build keeps those answers from its training start, the root's place marked (\`dist/cli/mcp-plain.json\`, scripts/bundle.mjs), and the entry gives them with this start's canonical root when it has no kept answers; the program checks them as it checks kept ones (test/transports/plain-start.test.ts plants a tool and instructions in a copy of the build to show each way) and keeps its own for the next start. So the row \`latch mcp\` above, a fresh workspace and state dir, is now such a start; the row with \`--config\` is a first start that is not plain, the program answering after its load, as every first start did before (the earlier build's row).

**A first start in a new workspace** (issue 32, 2026-12-05): a user with a config file starts \`latch mcp --root .\` alike in project after project, and each such first start paid the program's load before its first answer (the row with \`--config\`). A start that keeps its answers now also keeps them with its root's place marked, under a key that leaves the root out (the arguments with \`--root\`'s value marked, the folder marked where it is the root, and only the variables plain-start.ts lists as shaping the answers or naming their places: a shell's PWD and OLDPWD differ from project to project); the instructions are made for the mark by the same function (\`instructionsAt()\`), and kept only where they read as this start's with its root there. The same start in another workspace takes them, with its own root, when the stamps hold: the config file's text and the other files as before, the new workspace only a folder, and each place inside it (a skill folder) absent there too (src/transports/mcp/elsewhere.ts; test/transports/answer-cache.test.ts plants a tool in the marked file and sees it listed, then corrected, in a new workspace). A start whose answers may hang on its workspace beyond its name keeps none for elsewhere: a config file or policy program inside it, an allowed dir, a skill folder relative to the root, another argument that names it, a relative path that leads out of it when latch starts in it, a root of \`/\` (test/transports/elsewhere.test.ts). The row "a first start in this workspace with \`--config\`, its state dir kept" is such a start; the row with \`--config\` and a fresh state dir stays the cost of the very first one.

**What is left** for ≤ 2× \`node -e 0\` on a first start that is not plain (a config file, a skill folder, another flag) and has no answers kept, here or elsewhere (the very first start on a state dir, a skill folder, attached servers, a \`--policy-log\` file): ≤ 2× is ~50 ms from spawn to the answer, less than the program's load alone (~55 ms: reading the script and its cache, V8 deserialising it, the top level's zod schemas and their GC); a V8 startup snapshot of the program takes the load but not enough: measured in the section start-snapshot (bench/start-snapshot.ts), \`latch mcp\` from one is still ~2.9× \`node -e 0\` on Node 20, 22 and 24, and Node loads one only with \`--snapshot-blob\` on the command line, which a client that runs \`latch\` does not pass. ≤ 0.5× the peer is met since 26ba152 (the SDK loads after the first answers, above); what is left before the answer is the program's load (~45 ms after Node's own start), createHost (~9 ms; a fresh \`latch.db\` a few ms more) and the answers themselves (~2 ms). Not levers, measured: a fresh \`latch.db\` (the row with the state dir kept is no faster; paired in a loop of 20, the two differed by 0–5 ms, 2026-12-04), the CommonJS entry (tried above), the tools' implementations (2.9 ms for all 28). (src/web/fetch.ts's builtins and src/net/address.ts's BlockLists load at first use since 2dc6ecd: 2.49× → 2.43× \`node -e 0\` in 11 rounds.)`;

async function main(): Promise<void> {
  const load = watchLoad();
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-start-"));
  const runs: Record<string, Sample[]> = {
    node: [],
    version: [],
    call: [],
    latch: [],
    latchAgain: [],
    latchSame: [],
    latchConfig: [],
    latchElsewhere: [],
    peer: [],
  };
  // One state dir every round's second start reuses, as a user's later starts do: latch.db, its WAL
  // and the runs and locks folders exist (made by round 0's start, the warm-up).
  // The build before has its own: a newer latch.db schema is one it refuses.
  const kept = path.join(base, "state-kept");
  const keptBefore = path.join(base, "state-kept-before");
  // A user's later start of the same server: the same workspace, arguments and environment, so its
  // first answers are the ones the last start kept (src/transports/mcp/answer-cache.ts).
  const sameRoot = mkdtempSync(path.join(base, "ws-same-"));
  const sameState = path.join(base, "state-same");
  const sameBefore = path.join(base, "state-same-before");
  // A user's first start in a new workspace, their state dir kept: the answers the same start kept
  // in another workspace, with the root's place marked (src/transports/mcp/elsewhere.ts).
  const elsewhereState = path.join(base, "state-elsewhere");
  if (BEFORE_CLI) Object.assign(runs, { versionBefore: [], callBefore: [], latchBefore: [], latchSameBefore: [] });
  // `latch call`: one read of a small file, its state dir kept (the read is recorded in its ledger).
  const callArgs = (cli: string, root: string, state = kept) => [
    cli,
    "call",
    "read_file",
    '{"path":"a.txt","force":true}',
    "--root",
    root,
    "--state-dir",
    state,
  ];
  // A config file (empty: the default settings) makes a first start not plain: the program answers.
  const config = path.join(base, "agents.toml");
  writeFileSync(config, "");
  const listed = { latch: 0, peer: 0 };
  try {
    for (let r = 0; r <= ROUNDS; r++) {
      const got: Record<string, Sample> = {
        node: await timedExit(["-e", "0"]),
        version: await timedExit([LATCH, "--version"]),
      };
      // A fresh workspace and state dir per start: nothing cached from the previous one.
      const root = mkdtempSync(path.join(base, "ws-"));
      writeFileSync(path.join(root, "a.txt"), "hello\n");
      got.call = await timedExit(callArgs(LATCH, root));
      got.latch = await timedStart(
        [LATCH, "mcp", "--root", root, "--state-dir", path.join(base, `state-${r}`)],
        (n) => (listed.latch = n),
      );
      got.latchAgain = await timedStart([LATCH, "mcp", "--root", root, "--state-dir", kept], () => undefined);
      got.latchSame = await timedStart(
        [LATCH, "mcp", "--root", sameRoot, "--state-dir", sameState, "--config", config],
        () => undefined,
      );
      got.latchConfig = await timedStart(
        [LATCH, "mcp", "--root", root, "--state-dir", path.join(base, `state-config-${r}`), "--config", config],
        () => undefined,
      );
      got.latchElsewhere = await timedStart(
        [LATCH, "mcp", "--root", root, "--state-dir", elsewhereState, "--config", config],
        () => undefined,
      );
      got.peer = await timedStart([PEER, root], (n) => (listed.peer = n));
      if (BEFORE_CLI) {
        got.versionBefore = await timedExit([BEFORE_CLI, "--version"]);
        got.callBefore = await timedExit(callArgs(BEFORE_CLI, root, keptBefore));
        const state = path.join(base, `state-before-${r}`);
        got.latchBefore = await timedStart([BEFORE_CLI, "mcp", "--root", root, "--state-dir", state], () => undefined);
        got.latchSameBefore = await timedStart(
          [BEFORE_CLI, "mcp", "--root", sameRoot, "--state-dir", sameBefore, "--config", config],
          () => undefined,
        );
      }
      if (r > 0) for (const k of Object.keys(runs)) runs[k].push(got[k]); // round 0 warms the page cache
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
    load.stop();
  }
  const med = (k: string, f: keyof Sample) => median(runs[k].map((s) => s[f]));
  const ratio = (a: string, b: string, f: keyof Sample) => (med(a, f) / med(b, f)).toFixed(2);
  // The ratios pair by pair (the same round), whose median holds when the machine's speed drifts.
  const paired = (a: string, b: string, f: keyof Sample) =>
    median(runs[a].map((s, i) => s[f] / runs[b][i][f])).toFixed(2);
  const row = (name: string, k: string) =>
    `| ${name} | ${med(k, "wall").toFixed(0)} | ${med(k, "cpu").toFixed(0)} | ${ratio(k, "node", "wall")} / ${paired(k, "node", "wall")} | ${ratio(k, "node", "cpu")} / ${paired(k, "node", "cpu")} |`;
  const body = [
    measuredLine(
      `node --import tsx bench/start.ts --rounds ${ROUNDS}${BEFORE ? ` --before ${BEFORE}` : ""}`,
      load,
      ` (after \`npm run build\`, at ${thisTree()})`,
    ),
    noiseNote(load),
    "",
    `Each round runs the eight in turn (a warm-up round first, not counted); ${ROUNDS} rounds, medians. \`latch mcp\` starts four times a round: with a fresh state dir (its first start: latch.db made and migrated; a plain start, whose first initialize and tools/list are the build's: src/transports/mcp/plain-start.ts); with one state dir every round shares, in a fresh workspace each round; and in one workspace with one state dir and the same arguments every round, \`--config\` naming an empty file so that it is not a plain start, as a user's later starts of one server (whose first initialize and tools/list come from the answers the last such start kept: src/transports/mcp/answer-cache.ts); and once more as the first, with \`--config\` naming an empty file, which the program answers itself. Wall: from spawn to exit, or for an MCP server to its tools/list answer (initialize, then notifications/initialized and tools/list, as a client sends them; latch listed ${listed.latch} tools, the peer ${listed.peer}). CPU: user + system of the process, by /usr/bin/time for the two that exit, and for the servers the time every thread had spent on a CPU at the answer (/proc/PID/task/*/schedstat). Ratios are of the medians / the median of the per-round ratios.`,
    "",
    "| command | wall (ms) | CPU (ms) | wall ÷ `node -e 0` | CPU ÷ `node -e 0` |",
    "|---|---|---|---|---|",
    row("`node -e 0`", "node"),
    row("`latch --version`", "version"),
    row("`latch call read_file` (a 6-byte file)", "call"),
    row("`latch mcp` to the first tools/list", "latch"),
    row("the same, its state dir kept from an earlier start", "latchAgain"),
    row("a later start in the same workspace, with `--config` (its first answers kept)", "latchSame"),
    row("the same as the first, with `--config` (an empty file): not a plain start", "latchConfig"),
    row(
      "a first start in this workspace with `--config`, its state dir kept (answers kept elsewhere)",
      "latchElsewhere",
    ),
    row("server-filesystem to the first tools/list", "peer"),
    ...(BEFORE_CLI
      ? [
          row("`latch --version`, the earlier build", "versionBefore"),
          row("`latch call read_file`, the earlier build", "callBefore"),
          row("`latch mcp`, the earlier build", "latchBefore"),
          row(
            "`latch mcp`, the earlier build, a later start in the same workspace, with `--config`",
            "latchSameBefore",
          ),
        ]
      : []),
    "",
    `\`latch mcp\` ÷ server-filesystem: wall ${ratio("latch", "peer", "wall")} (per round ${paired("latch", "peer", "wall")}), CPU ${ratio("latch", "peer", "cpu")} (per round ${paired("latch", "peer", "cpu")}); with its state dir kept: wall ${ratio("latchAgain", "peer", "wall")} (per round ${paired("latchAgain", "peer", "wall")}); a later start in the same workspace: wall ${ratio("latchSame", "peer", "wall")} (per round ${paired("latchSame", "peer", "wall")}); a first start with a config file: wall ${ratio("latchConfig", "peer", "wall")} (per round ${paired("latchConfig", "peer", "wall")}); a first start in a workspace with a config file, the state dir kept: wall ${ratio("latchElsewhere", "peer", "wall")} (per round ${paired("latchElsewhere", "peer", "wall")}); lower is better.`,
    ...(BEFORE
      ? [
          `The earlier build: ${BEFORE} (\`git archive\` of that commit, \`npm run build\`), in the same rounds; \`latch mcp\` now ÷ then: wall ${paired("latch", "latchBefore", "wall")}, CPU ${paired("latch", "latchBefore", "cpu")}; \`latch call\` now ÷ then: wall ${paired("call", "callBefore", "wall")}, CPU ${paired("call", "callBefore", "cpu")} (per round).`,
        ]
      : []),
  ].join("\n");
  publish(
    "start",
    "Start-up: latch --version and latch mcp against node -e 0 and the reference server",
    body + "\n\n" + NOTES,
  );
}

await main();
