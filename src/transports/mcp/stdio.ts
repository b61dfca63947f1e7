// latch mcp over stdio: one client, one ledger session. Without --root, every folder the client offers
// as an MCP root is served (the first is where relative paths resolve), else the current folder; a
// `notifications/roots/list_changed` is followed at once. With --root, the operator chose the folder:
// the client's roots are not served (those outside it are named on stderr). The run ends when the
// client closes stdin, when stdout breaks (EPIPE: the client stopped reading) or on SIGTERM/SIGINT;
// each way, the running calls are cancelled, their processes killed and their outcomes logged, and a
// line on stderr says why latch stopped. A client that closes stdin after its requests (a script, a
// pipe) is served first: what it sent goes on, for SERVE_AFTER_EOF_MS at most (a signal ends that
// wait), and is answered.
import { randomUUID } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { startRun } from "../../host/recover.js";
import { log, reportRecovered } from "../log.js";
import {
  dropKept,
  keepAnswers,
  keepElsewhere,
  sameAnswers,
  stateDirInside,
  type Answers,
  type EarlyStart,
} from "./answer-cache.js";
import { placesByRoot } from "./elsewhere.js";
import { ROOT_MARK, withRoot } from "./plain-start.js";
import { EarlyAnswers } from "./early.js";
import { instructionsAt, instructionsFor } from "./instructions.js";
import { listTools } from "./tool-list.js";
import type { SdkSession } from "./stdio-sdk.js";
import { StdioWire } from "./stdio-wire.js";
import { argumentLimits } from "./call-size.js";
import { onStopSignals } from "../stop-signals.js";

/**
 * After a clean end of stdin, how long (ms) the calls the client sent have to end, and their answers to
 * go out, before the rest are cancelled: a shell command the client left running still stops soon.
 */
const SERVE_AFTER_EOF_MS = 1000;

export interface StdioOptions {
  /** Makes the host, for the given or current folder (so a bad config stops startup). */
  makeHost(): Promise<Host>;
  /** Whether --root was given: then the client's roots are not served. */
  explicitRoot: boolean;
  approveAll?: boolean;
  /** What the command's entry read and answered before the program loaded (answer-cache.ts). */
  start?: EarlyStart;
}

export async function serveStdio(opts: StdioOptions): Promise<void> {
  const host = await opts.makeHost();
  const run = startRun(host.state);
  reportRecovered(run.recovered);
  const session = `mcp-stdio-${randomUUID()}`;
  const transport = new StdioWire(
    undefined,
    undefined,
    argumentLimits(() => host.tools()),
  );
  transport.onerror = (err) => log("warn", err.message);
  // The host was made with probeAfterStart: the sandbox probe's bwrap run starts once the first answers
  // are out (calls of tools that start processes wait for it), and what it found goes to stderr, as a start-up line.
  let announced: Promise<void> | undefined;
  const announce = () =>
    (announced ??= host
      .probed()
      .then(() => void process.stderr.write(`latch mcp: ${host.containment}\n`))
      .catch((err: Error) => log("error", `the sandbox probe failed: ${err.message}`)));
  let stopping = false;
  /** A signal (or a broken stream) that came while a client that closed stdin was served: it ends that wait. */
  let thenSignal: string | undefined;
  let worst = 0;
  let hurry!: () => void;
  const hurried = new Promise<void>((r) => (hurry = r));
  /** The SDK's part loading and taking over what the early answers held (stdio-sdk.ts). */
  let attaching: Promise<SdkSession | undefined> | undefined;
  /**
   * `eof`: the client closed stdin (served first, exit 0); `signal`: SIGTERM/SIGINT (exit 0); `broken`: a
   * stream failed, or the session could not start (exit 1). Each is said on stderr as an error but `eof`.
   */
  const stop = async (why: string, how: "eof" | "signal" | "broken") => {
    const code = how === "broken" ? 1 : 0;
    if (stopping) {
      if (how !== "eof") {
        thenSignal ??= why;
        worst = Math.max(worst, code); // a stream that broke meanwhile still exits 1
        hurry();
      }
      return;
    }
    worst = code;
    const clientDone = how === "eof";
    const signalled = how === "signal";
    stopping = true;
    // A client that leaves before its first answers still gets the start-up line (bounded: bwrap's probe
    // gives up after 10 s on its own). A signal waits for no probe: a client that sends SIGTERM gives
    // latch ~2 s before SIGKILL, for the calls' cleanup.
    const lineOut = signalled ? undefined : Promise.race([announce(), new Promise((r) => setTimeout(r, 2000).unref())]);
    if (clientDone) {
      log("info", `${why}: what it sent is served first (at most ${SERVE_AFTER_EOF_MS} ms)`);
      await Promise.race([served(SERVE_AFTER_EOF_MS), hurried]);
    }
    await Promise.race([lineOut, hurried]);
    const n = await host.shutdown(why);
    run.end(); // what calls that did not end in time still hold: temp files, locks, processes
    const line = `${why}${thenSignal ? `, then ${thenSignal}` : ""}; ${n === 0 ? "no call was running" : `${n} running call${n === 1 ? " was" : "s were"} cancelled (logged as interrupted where decided)`}; latch stopped.`;
    log(!clientDone || n > 0 || thenSignal ? "error" : "info", line);
    await transport.close();
    process.exit(worst);
  };
  /**
   * What the client sent before closing stdin runs, bounded: the SDK takes over what the early answers
   * hold (take() called for it at the first such message), and the calls, from the request on (one
   * waiting for the probe or for the client's roots, which it can no longer list), end and are answered.
   */
  const served = async (waitMs: number) => {
    const until = Date.now() + waitMs;
    const left = () => Math.max(0, until - Date.now());
    let timer: NodeJS.Timeout | undefined;
    const sdk =
      attaching &&
      (await Promise.race([
        attaching,
        new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), waitMs))),
      ]));
    clearTimeout(timer);
    sdk?.clientGone();
    await Promise.all([sdk?.callsEnded(left()), host.callsEnded(left())]);
    await new Promise((r) => setImmediate(r)); // the answers' sends, a few promise steps after their calls
  };
  // The answers the entry gave (an earlier start's, or the build's for a plain start) are checked against
  // this start's own, which are kept for the next start when the entry gave none or others.
  const cached = cachedAnswers(host, session, !opts.explicitRoot, opts.start);
  // The first initialize and tools/list are answered without the MCP SDK (early.ts); it loads after.
  const early: EarlyAnswers = new EarlyAnswers({
    host,
    session,
    clientRoots: !opts.explicitRoot,
    send: (m) => transport.send(m),
    answered: opts.start,
    onListed: (tools) => cached.listed(tools),
    need: () => {
      void announce();
      attaching = cached.checked
        .then((stale) => stale && early.listedStale())
        .then(() => import("./stdio-sdk.js"))
        .then(({ attachSdk }) =>
          attachSdk({
            host,
            session,
            wire: transport,
            early,
            explicitRoot: opts.explicitRoot,
            approveAll: opts.approveAll,
            onListed: (tools) => cached.listed(tools),
          }),
        )
        .catch((err: Error) => {
          void stop(`the MCP session could not start (${err.message})`, "broken");
          return undefined;
        });
    },
  });
  transport.intercept = (m) => early.take(m);
  transport.onfault = (why, broken) => void stop(why, broken ? "broken" : "eof");
  onStopSignals((sig) => void stop(`${sig} received`, "signal"), host, run);
  await transport.start(opts.start?.stdin);
  log("info", `serving ${host.root} over stdio`);
}

/** Whose answers the entry gave, as the warning says it. */
const FROM = {
  kept: "an earlier start's",
  elsewhere: "an earlier start's in another workspace",
  build: "the build's for a plain start",
} as const;

/**
 * The check of the entry's answers (kept by an earlier start, here or in another workspace, or the
 * build's for a plain start) and the keeping of this start's, also for a start elsewhere (elsewhere.ts):
 * `checked` resolves true when the entry listed tools that are not this start's (the client is told to
 * list again); `listed` is told the tools this start answered with itself. A host with attached
 * servers or a skill folder keeps nothing: its list comes from the servers, or from a skill call that
 * is logged; nor one whose later start with the same arguments is refused (Host.listingInputs: a
 * --policy-log file), nor one whose state dir is in its workspace.
 */
function cachedAnswers(
  host: Host,
  session: string,
  clientRoots: boolean,
  start: EarlyStart | undefined,
): { checked: Promise<boolean>; listed(tools: Tool[]): void } {
  const keep = (answers: Answers) => {
    try {
      if (start === undefined) return;
      const where = start.elsewhere;
      // Answers kept elsewhere that were not this start's go, whatever is kept now: else a start that
      // keeps nothing (a skill folder) would be given them again at each start.
      if (start.from === "elsewhere" && where) dropKept(host.state.dir, where.key);
      if (host.gateway !== undefined || host.mayHoldSkills()) return;
      // In the workspace, the entry would not take them (answer-cache.ts): a model could have written there.
      if (
        stateDirInside(
          host.state.dir,
          host.roots().flatMap((r) => [r.root, r.workspace]),
        )
      )
        return;
      const inputs = host.listingInputs();
      if (!inputs) return;
      keepAnswers(host.state.dir, start.key, inputs, answers);
      // For this start in another workspace: only where the entry's root is this host's, no setting
      // places anything by the root, and the instructions made for the mark are these with this root there.
      if (!where || clientRoots || where.root !== host.root || placesByRoot(host.settings)) return;
      const marked = instructionsAt(host, ROOT_MARK);
      if (marked !== undefined && withRoot(marked, host.root) === answers.instructions)
        keepElsewhere(host.state.dir, where, inputs, marked, answers.tools);
    } catch (err) {
      log("debug", `the answers were not kept for the next start: ${(err as Error).message}`);
    }
  };
  const sent = start?.sent;
  let listedOnce = false;
  const checked = sent
    ? listTools(host, session).then(
        (tools) => {
          const own = { instructions: instructionsFor(host, clientRoots), tools };
          const same = sameAnswers(sent, own);
          if (!same.instructions)
            log("warn", `the instructions answered at initialize were ${FROM[start?.from ?? "kept"]}, not this one's`);
          if (!same.tools || !same.instructions) keep(own);
          return !same.tools;
        },
        (err: Error) => {
          log("warn", `the tools listed before the program loaded could not be checked: ${err.message}`);
          return true;
        },
      )
    : Promise.resolve(false);
  return {
    checked,
    // The first listing, whether the early answers or the SDK gave it: a busy client's tools/list can
    // come after the SDK loaded (early.ts waits 25 ms after initialize), and the next start still needs it.
    listed: (tools) => {
      if (sent || listedOnce) return;
      listedOnce = true;
      keep({ instructions: instructionsFor(host, clientRoots), tools });
    },
  };
}
