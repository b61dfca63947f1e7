#!/usr/bin/env node
// The latch command's entry. A bare --version, or --help into a pipe, is answered here from what the
// build computed, loading nothing else (a script that asks for the version pays a bare Node start);
// every other command loads the program (program.ts): with the V8 code cache the build made for this
// Node, else as a chunk of its own with Node's compile cache where there is one (code-cache.ts).
import { existsSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { fileURLToPath } from "node:url";
import { LATCH_VERSION } from "../version.js";
import { loadProgram } from "./code-cache.js";
import { startProbe } from "../sandbox/probe-run.js";

/** The top-level help as commander prints it into a pipe (width 80, no colours): scripts/bundle.mjs. */
declare const LATCH_HELP: string | undefined;
const help = typeof LATCH_HELP === "undefined" ? undefined : LATCH_HELP;

/** The commands that make a host (hostFromFlags in options.ts), whose start probes the sandbox. */
const MAKES_A_HOST = new Set(["mcp", "call", "explain", "tools", "undo", "history", "servers"]);

process.stdout.on("error", endOnClosedPipe);

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
if (only === "--version" || only === "-V") {
  process.stdout.write(`${LATCH_VERSION}\n`);
} else if ((only === "--help" || only === "-h") && help !== undefined && !process.stdout.isTTY) {
  // A terminal gets commander's own help, wrapped to its width.
  process.stdout.write(help);
} else if (!folderReadable()) {
  process.exitCode = 1;
} else {
  // A command that makes a host probes the sandbox first (one bwrap run, ~20 ms): started here, bwrap
  // runs on another core while the program loads, and the host finds its answer (src/sandbox/probe.ts).
  // `latch mcp` over stdio probes later, once its client's first messages are answered (stdio.ts).
  const probesLater = args[0] === "mcp" && !args.includes("--http");
  const early = MAKES_A_HOST.has(args[0]) && !probesLater ? startProbe(process.env.PATH) : undefined;
  // `latch mcp` over stdio answers its client's first initialize and tools/list from the answers an
  // earlier start with the same inputs gave, when it has them, before the program loads
  // (src/transports/mcp/answer-cache.ts): only from the build's program, whose stamp names them.
  const program = fileURLToPath(new URL("./program.cjs", import.meta.url));
  const stdio =
    probesLater && existsSync(program)
      ? await (await import("../transports/mcp/answer-cache.js")).answerFromCache(args, program)
      : undefined;
  // After the load: V8 takes its code cache only under the flags it was made with (the build's training
  // run, which this leaves alone, keeps V8's defaults for every command that loads it).
  const training = process.env.LATCH_BUILD_CODE_CACHE === "1";
  const { runProgram } = await loadProgram();
  if (args[0] === "mcp" && !training) optimiseSooner();
  await runProgram(process.argv, early, stdio);
  // A start that failed after the entry answered (its reason on stderr) ends now, not when the client
  // closes stdin: the entry's handle on fd 0 would keep it running, answering nothing.
  if (process.exitCode) stdio?.stdin?.reader?.socket.destroy();
}

/**
 * `latch mcp` serves a session, the same few calls again and again. V8 11 (Node 20) optimises a
 * function once it has run a budget of bytecode, 67,584 bytes by default, and latch's read path took
 * ~2,000 calls to get there: at 8,000 it does within a few hundred (bench/RESULTS.md, `v8-budget`).
 * Later V8s (Node 22, 24) count calls instead and know no such flag (setting it prints an error):
 * left at their defaults there.
 */
function optimiseSooner(): void {
  if (Number.parseInt(process.versions.v8, 10) < 12) setFlagsFromString("--interrupt-budget=8000");
}

/**
 * Whether the folder latch started in is still there: every command resolves relative paths (and its
 * config's) from it, and node's process.cwd() throws once it is removed. Else one line with the fix.
 */
function folderReadable(): boolean {
  try {
    process.cwd();
    return true;
  } catch (err) {
    process.stderr.write(
      `latch: the folder it was started in no longer exists (${(err as NodeJS.ErrnoException).code ?? "cwd"}); start latch from a folder that exists.\n`,
    );
    return false;
  }
}

/**
 * `latch tools | head`, `latch --version | true`: the reader went away, and the rest of the output has
 * nowhere to go. Ends quietly, as git and ripgrep do, not with an unhandled EPIPE's stack trace.
 * `latch mcp` listens itself (a closed stdout is its client leaving: the calls are cancelled and logged
 * first), so this stands aside when another listener is there; any other error is raised as before.
 */
function endOnClosedPipe(err: NodeJS.ErrnoException): void {
  if (process.stdout.listenerCount("error") > 1) return;
  if (err.code !== "EPIPE") throw err;
  process.exit(process.exitCode ?? 0);
}
