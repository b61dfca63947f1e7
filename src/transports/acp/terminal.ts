// The client shape's processes: each planned step runs in an ACP client terminal. create → wait for
// exit (bounded by the call's deadline and signal) → kill on timeout or cancellation → output →
// release, always. The step is the one the plan vetted: its resolved program and literal argv.
import type { AgentContext } from "@agentclientprotocol/sdk";
import { noOutcome } from "../../process/exec.js";
import type { ProcessBackend } from "../../process/backend.js";
import { messageOf } from "./files.js";

/** What a terminal keeps of a step's output (the call's own head-and-tail cap applies after it). */
const TERMINAL_OUTPUT_BYTES = 1 << 20;

export function acpProcesses(client: AgentContext, sessionId: string): ProcessBackend {
  return {
    kind: "client",
    async run(spec) {
      const started = Date.now();
      const out = noOutcome();
      const done = () => ({ ...out, durationMs: Date.now() - started });
      if (spec.stdin !== undefined) {
        out.spawnError = "an ACP client terminal takes no standard input; pass the text as a file instead";
        return done();
      }
      let term;
      try {
        term = await client.createTerminal({
          sessionId,
          command: spec.file,
          args: spec.args,
          cwd: spec.cwd,
          env: Object.entries(spec.env).flatMap(([name, value]) => (value === undefined ? [] : [{ name, value }])),
          outputByteLimit: TERMINAL_OUTPUT_BYTES,
        });
      } catch (err) {
        out.spawnError = `the editor could not start it: ${messageOf(err)}`;
        return done();
      }
      try {
        const stop = stopSignal(spec.deadline, spec.signal);
        const exit = await Promise.race([term.waitForExit(), stop.reached]);
        stop.clear();
        if (exit === "timeout" || exit === "aborted") {
          if (exit === "timeout") out.timedOut = true;
          else out.cancelled = true;
          await term.kill();
        }
        const o = await term.currentOutput();
        if (o.output) spec.stdout.write(Buffer.from(o.output, "utf8"));
        const status = exit === "timeout" || exit === "aborted" ? o.exitStatus : exit;
        out.exitCode = status?.exitCode ?? null;
        out.signal = (status?.signal as NodeJS.Signals | null | undefined) ?? null;
        return done();
      } finally {
        await term.release().catch(() => undefined); // a client that is gone has released it already
      }
    },
  };
}

/** Resolves "timeout" at the deadline or "aborted" on the signal, whichever comes first. */
function stopSignal(deadline: number, signal: AbortSignal) {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const reached = new Promise<"timeout" | "aborted">((resolve) => {
    if (signal.aborted) return resolve("aborted");
    timer = setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now()));
    onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return {
    reached,
    clear() {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    },
  };
}
