// createHost: everything a call needs, prepared once (root, config, state, ledger), and the one call
// path every transport goes through.
import { stat } from "node:fs/promises";
import path from "node:path";
import { ConfigError, chooseConfigPath, effectivePolicies, loadConfig, type Config } from "../config/load.js";
import { localFsSettings, type LocalFsSettings, type RawPolicies } from "../config/toolsets.js";
import { TOOLS, TOOLSETS } from "../registry.js";
import type { Shape, ToolSpec } from "../tools/define.js";
import { Ledger } from "../workspace/ledger.js";
import { canonicalize } from "../workspace/paths.js";
import { openStateDir, defaultStateDir, type StateDir } from "../workspace/state.js";
import { runCall, explainCall, type HostContext } from "./pipeline.js";
import type { CallOptions, CallResult, Explanation, PolicyHook } from "./types.js";

export interface HostOptions {
  /** The workspace folder. */
  root: string;
  configPath?: string;
  /** An already-loaded config (tests, embedders); wins over configPath. */
  config?: Config;
  agent?: string;
  stateDir?: string;
  shape?: Shape;
  /** Policy hooks (steps 3–5): each gives a Decision; the strictest wins. */
  policies?: PolicyHook[];
  env?: NodeJS.ProcessEnv;
}

export interface Host {
  readonly root: string;
  readonly state: StateDir;
  readonly config: Config;
  readonly agent?: string;
  readonly shape: Shape;
  /** The tools this host offers, in registry order: those of its shape and its agent's toolsets. */
  tools(): ToolSpec[];
  call(tool: string, args: unknown, opts?: CallOptions): Promise<CallResult>;
  explain(tool: string, args: unknown, opts?: CallOptions): Promise<Explanation>;
  close(): void;
}

export async function createHost(opts: HostOptions): Promise<Host> {
  const env = opts.env ?? process.env;
  const root = await existingFolder(opts.root, "root");
  const config = opts.config ?? loadConfig(opts.configPath, env);
  const policies: RawPolicies = effectivePolicies(config, opts.agent);
  const fs: LocalFsSettings = localFsSettings(policies.local_fs);
  const fsRoot = fs.allowedDir ? await existingFolder(path.resolve(root, fs.allowedDir), "tools_policies.local_fs._allowed_dir") : root;
  const state = openStateDir(opts.stateDir ? path.resolve(opts.stateDir) : defaultStateDir(env));
  const configFile = config.file ?? chooseConfigPath(opts.configPath, env).file;
  const controlPlane = [state.dir, await canonicalize(configFile)];
  const shape = opts.shape ?? "workspace";
  const listed = listTools(config, opts.agent, shape, policies);
  const ledger = new Ledger(state.db);

  const startupEnv = Object.freeze({ ...env });
  const ctx: HostContext = { root: fsRoot, fs, policies, state, ledger, controlPlane, listed, hooks: opts.policies ?? [], startupEnv, startupPath: pathDirs(env.PATH) };
  return {
    root: fsRoot,
    state,
    config,
    agent: opts.agent,
    shape,
    tools: () => [...listed],
    call: (tool, args, callOpts = {}) => runCall(ctx, tool, args, callOpts),
    explain: (tool, args, callOpts = {}) => explainCall(ctx, tool, args, callOpts),
    close: () => ledger.close(),
  };
}

function listTools(config: Config, agent: string | undefined, shape: Shape, policies: RawPolicies): ToolSpec[] {
  const wanted = agent === undefined ? undefined : config.agents[agent]?.tools;
  for (const name of wanted ?? []) {
    if (!TOOLSETS.includes(name)) {
      throw new ConfigError(`${config.file ?? "agents.toml"}: \`agents.${agent}.tools\` names the unknown toolset \`${name}\`; this version has: ${TOOLSETS.join(", ")}.`);
    }
  }
  return TOOLS.filter((t) => t.shapes.includes(shape) && (wanted === undefined || wanted.includes(t.toolset)) && (t.enabled?.(policies) ?? true));
}

/** PATH as absolute directories only: a relative entry would make lookups depend on the cwd. */
function pathDirs(raw: string | undefined): string[] {
  return (raw ?? "").split(path.delimiter).filter((d) => d !== "" && path.isAbsolute(d));
}

async function existingFolder(dir: string, what: string): Promise<string> {
  const abs = path.resolve(dir);
  const st = await stat(abs).catch(() => undefined); // a missing or unreadable folder is reported below, with the fix
  if (!st?.isDirectory()) throw new ConfigError(`Expected \`${what}\` to be an existing folder, got \`${dir}\`.`);
  return canonicalize(abs);
}
