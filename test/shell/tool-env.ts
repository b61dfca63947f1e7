// Run local_shell / run_tool the way the host does (schema, plan, run), with a ToolEnv made here, so
// these tests exercise the tools under their own toolset policies whatever envelope the host has.
import { BackgroundProcesses } from "../../src/shell/background.js";
import { LOCAL_PROCESSES } from "../../src/process/backend.js";
import { LOCAL_FILES } from "../../src/fs/backend.js";
import path from "node:path";
import { parseSettings } from "../../src/config/settings.js";
import type { RawPolicies } from "../../src/config/toolsets.js";
import { Refusal, ToolError } from "../../src/errors.js";
import type { Mode, ProbeResult } from "../../src/sandbox/types.js";
import { checkContainmentRequired, containmentFor, sandboxState } from "../../src/host/containment.js";
import type { ToolEnv, ToolSpec } from "../../src/tools/define.js";
import { allDefinitions, resolveEnvelope } from "../../src/policy/envelope-parse.js";
import { visibilityRule } from "../../src/policy/visibility.js";
import { resolvePath } from "../../src/fs/paths.js";

export interface EnvOptions {
  root: string;
  policies?: RawPolicies;
  startupEnv?: NodeJS.ProcessEnv;
  startupPath?: string[];
  signal?: AbortSignal;
  controlPlane?: string[];
  /** Default: no sandbox (these tests are about the tools; test/sandbox runs them contained). */
  probe?: ProbeResult;
  mode?: Mode;
}

const NO_SANDBOX: ProbeResult = {
  available: false,
  reason: "tool tests run uncontained",
  fix: "test/sandbox covers containment",
};

/** A tool environment, with the probe and mode the host would hold, for `callTool` to work out containment. */
export type TestToolEnv = ToolEnv & { probe: ProbeResult; mode?: Mode };

export function makeToolEnv(o: EnvOptions): TestToolEnv {
  const startupEnv = o.startupEnv ?? process.env;
  const pathPolicy = { root: o.root, controlPlane: o.controlPlane ?? [], deniedSubstrings: [] };
  return {
    session: "test",
    root: o.root,
    settings: parseSettings({ toolsPolicies: o.policies ?? {}, agents: {} }),
    resolve: (input, opts) => resolvePath(pathPolicy, input, opts),
    recordRead: () => undefined, // the shell tools never touch the read ledger
    readSeen: () => undefined,
    mutation: undefined as never,
    files: LOCAL_FILES,
    processes: LOCAL_PROCESSES,
    background: new BackgroundProcesses(),
    startupEnv,
    startupPath: o.startupPath ?? (startupEnv.PATH ?? "").split(path.delimiter).filter((d) => path.isAbsolute(d)),
    controlPlane: pathPolicy.controlPlane,
    visibility: visibilityRule({
      root: o.root,
      controlPlane: pathPolicy.controlPlane,
      deniedSubstrings: [],
      envelope: resolveEnvelope("auto_edit", allDefinitions({})),
      tool: "local_shell",
    }),
    probe: o.probe ?? NO_SANDBOX,
    mode: o.mode,
    signal: o.signal ?? new AbortController().signal,
    progress: () => undefined,
  };
}

export type Outcome =
  | { status: "ok"; result: any }
  | { status: "refused"; reason: string; hint?: string }
  | { status: "error"; code: string; message: string };

/** As the host does it: containment worked out once for the call, `required` checked before the plan. */
export async function callTool(tool: ToolSpec, args: unknown, testEnv: TestToolEnv): Promise<Outcome> {
  const { probe, mode } = testEnv;
  const env: ToolEnv = {
    ...testEnv,
    sandbox: sandboxState(tool, testEnv.settings, probe),
    containment: containmentFor(tool, { ...testEnv, probe, home: testEnv.startupEnv.HOME }, mode ?? "workspace-write"),
  };
  const parsed = tool.schema.safeParse(args);
  if (!parsed.success) return { status: "error", code: "EINVAL", message: parsed.error.message };
  try {
    checkContainmentRequired(tool, env.settings, probe);
    const plan = await tool.plan(parsed.data, env);
    const out = await tool.run(parsed.data, plan, env);
    return { status: "ok", result: out.result };
  } catch (err) {
    if (err instanceof Refusal) return { status: "refused", reason: err.reason, hint: err.hint };
    if (err instanceof ToolError) return { status: "error", code: err.code, message: err.message };
    throw err;
  }
}
