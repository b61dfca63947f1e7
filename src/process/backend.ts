// Where local_shell's steps run. In the workspace shape, processes on this machine (runBounded, inside
// the sandbox when there is one); in the client shape, the editor's terminals over ACP
// (src/transports/acp/terminal.ts): create, output, wait, kill, release. The plan, the envelope, the
// approval and the log are the same either way.
import { runBounded, type BoundedOutcome, type BoundedSpec } from "./exec.js";

export interface ProcessBackend {
  readonly kind: "local" | "client";
  /** Run one planned step to its end (exit, deadline or abort), its output into the spec's sinks. */
  run(spec: BoundedSpec): Promise<BoundedOutcome>;
}

export const LOCAL_PROCESSES: ProcessBackend = { kind: "local", run: runBounded };
