// What a shell-axis plan tells the policy (DESIGN.md, "The plan says what the call will touch"): the
// steps that run, every argv that would be executed (wrappers' inner commands included), each one's
// name and capabilities as the planner's program tables found them, or the line handed to /bin/sh
// unparsed. local_shell and run_tool plan it (src/shell/plan.ts, src/tools/run_tool.ts); the envelope,
// the policy programs and the approval's risks read it (shell-view.ts, risk.ts). Typed, so a planner
// that changes its shape fails to compile rather than leaving the envelope a plan it cannot read.
import type { Capabilities } from "../shell/programs/types.js";

export interface StepEffect {
  argv: string[];
  /** The folder it runs in (planners always say; a plan without one is read as the root). */
  cwd?: string;
  /** The resolved program; "cd" for latch's own cd (with `builtin`), which runs no program. */
  program?: string;
  builtin?: "cd";
}

export interface CommandEffect {
  argv: string[];
  /** The name an allowlist may match it by (a workspace `./ls` is known by its path, not as `ls`). */
  name?: string;
  capabilities?: Capabilities;
}

export interface ShellEffect {
  steps?: StepEffect[];
  /** Every argv that would run. */
  commands?: string[][];
  /** For each of `commands`, in the same order. */
  programs?: CommandEffect[];
  /** The union of every command's. */
  capabilities?: Capabilities;
  /** A line handed to /bin/sh as is (no-policy `shell: true`). */
  raw?: string;
}
