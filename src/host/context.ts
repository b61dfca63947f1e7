// What every step of the call path reads: the host's context (one per root) and the verdict of steps
// 1–5 (pipeline.ts evaluate()), apart from the path itself so its helpers can share them.
import type { ProcessBackend } from "../process/backend.js";
import type { FileBackend } from "../fs/backend.js";
import type { Approver } from "../approval/approver.js";
import type { PreparedApprovals } from "../approval/prepared.js";
import type { Settings } from "../config/settings.js";
import type { Refusal } from "../errors.js";
import type { Effect } from "../policy/effect.js";
import type { PolicySetup } from "../policy/gates.js";
import type { RunLog } from "../audit/run-log.js";
import type { BackgroundProcesses } from "../shell/background.js";
import type { Plan, ToolEnv, ToolSpec } from "../tools/define.js";
import type { Ledger } from "../fs/ledger.js";
import type { PreImages } from "../fs/preimages.js";
import type { SandboxState } from "../policy/envelope-eval.js";
import type { ProbeResult } from "../sandbox/types.js";
import type { StateDir } from "../fs/state.js";
import type { CallResult, Decision } from "./types.js";
import type { DisclosureScanner } from "../disclose/scanner.js";
import type { FolderIndex } from "../browse/find-index.js";

/** Which decisions are fdatasynced before their call runs: those of calls that can change something, or all. */
export type LogSync = "effects" | "all";

export interface HostContext {
  /** Where local_fs works: this root's workspace, or its `_allowed_dir`. */
  root: string;
  /** The workspace folder (the MCP root, `--root`) that `root` belongs to. */
  workspace: string;
  /** The other roots served beside this one (several MCP roots), and the context of each. */
  otherRoots?: readonly string[];
  rootContext?(root: string): HostContext | undefined;
  /** The toolsets' settings, parsed once (createHost). */
  settings: Settings;
  state: StateDir;
  ledger: Ledger;
  /** The undo store (src/fs/preimages.ts): what each write replaced. */
  preimages?: PreImages;
  controlPlane: string[];
  listed: readonly ToolSpec[];
  /** Why an attached tool of that name is not offered (a name taken, a definition changed), if it is one. */
  unlisted?(name: string): string | undefined;
  policy: PolicySetup;
  /** The host's approver; a call's own (CallOptions.approver) wins. None means deny. */
  approver?: Approver;
  log: RunLog;
  logSync: LogSync;
  startupEnv: Readonly<NodeJS.ProcessEnv>;
  startupPath: readonly string[];
  /** The client shape's backends (ACP); this disk and this machine's processes otherwise. */
  files: FileBackend;
  processes: ProcessBackend;
  background: BackgroundProcesses;
  probe: ProbeResult;
  /** The disclosure gate's scanner (issue 29): known secret values of this host, the format rules. */
  scanner: DisclosureScanner;
  /** Approvals prepared (host.prepare) and waiting for their answer (CallOptions.approval). */
  prepared: PreparedApprovals;
  /** find_files' folder index (src/browse/find-index.ts), one for the host's roots. */
  folderIndex: FolderIndex;
}

/** The outcome of steps 1–5 (before approval): either a finished result (bad input), or a verdict with its trail. */
export type Evaluation =
  | { done: CallResult; gates: Decision[] }
  | {
      tool: ToolSpec;
      args: unknown;
      /** The context of the root the call works in (the first, or the one its paths name). */
      ctx: HostContext;
      plan: Plan;
      /** What the call will touch, from the plan and the tool's axis: what every gate reads. */
      effect: Effect;
      env: ToolEnv;
      gates: Decision[];
      final: Decision;
      refusal?: Refusal;
      /** For tools that start processes: does the call run contained, with network? */
      sandbox?: SandboxState;
    };
