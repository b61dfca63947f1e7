// createHost: everything a call needs, prepared once (root, config, state, ledger), and the one call
// path every transport goes through.
import { BackgroundProcesses } from "../shell/background.js";
import { stat } from "node:fs/promises";
import path from "node:path";
import { ConfigError, chooseConfigPath, loadConfig, type Config } from "../config/load.js";
import { parseSettings, type Settings } from "../config/settings.js";
import { agentToolsets, TOOLS } from "../registry.js";
import type { ClientCapability, Shape, ToolSpec } from "../tools/define.js";
import { Ledger } from "../fs/ledger.js";
import { canonicalize } from "../fs/paths.js";
import { openStateDir, defaultStateDir, type StateDir } from "../fs/state.js";
import { InFlight } from "./inflight.js";
import { shortened } from "./short.js";
import { runCall, explainCall, type HostContext, type LogSync } from "./pipeline.js";
import type { CallOptions, CallResult, Explanation } from "./types.js";
import type { Approver } from "../approval/approver.js";
import { DEFAULT_ENVELOPE, type Envelope } from "../policy/envelope.js";
import { allDefinitions, EnvelopeError, resolveEnvelope } from "../policy/envelope-parse.js";
import type { PolicySetup } from "../policy/gates.js";
import { LogWriteError } from "../audit/log.js";
import { loadPrograms, ProgramLoadError, type Posture } from "../policy/programs.js";
import { LogHeads } from "../audit/log-heads.js";
import { pruneRunLogs, type Retention } from "../audit/log-files.js";
import { defaultLogPath, RunLog } from "../audit/run-log.js";
import { containmentLine } from "./containment.js";
import { loadedControlPlane } from "./control-plane.js";
import { NOT_PROBED, probeContainment } from "../sandbox/probe.js";
import type { ProbeResult } from "../sandbox/types.js";
import { LOCAL_PROCESSES } from "../process/backend.js";
import { LOCAL_FILES } from "../fs/backend.js";
import type { ClientBackends } from "./client.js";
import { DisclosureScanner } from "../disclose/scanner.js";
import { knownNeedles } from "../disclose/known.js";
import { disclosureKey } from "../disclose/key.js";

export interface HostOptions {
  /** The workspace folder. */
  root: string;
  configPath?: string;
  /** An already-loaded config (tests, embedders); wins over configPath. */
  config?: Config;
  agent?: string;
  stateDir?: string;
  shape?: Shape;
  env?: NodeJS.ProcessEnv;
  /** The envelope by name (built-in or from the config): else the agent's, else auto_edit. */
  envelope?: string;
  /** Policy program files (--policy), added to the config's `policy_programs`. */
  policyPrograms?: string[];
  /** What an abstention of every program becomes; needs programs and an explicit policyLog. Default deny-unless-allowed. */
  posture?: Posture;
  /** The posture when `posture` is not given (no requirements attached): `latch mcp` passes postureFromEnv(). */
  defaultPosture?: Posture;
  /** A new file for the policy log (an existing path is refused); default: a new file in the state dir. */
  policyLog?: string;
  /** The folder of `--policy-log DIR`: the other runs' logs there are control plane too. */
  policyLogDir?: string;
  /** `--log-retention`: with the config's `[log]`, what the run logs folder keeps (each limit applies). */
  logRetention?: Retention;
  /** Put the raw request and result in the log, not only their hashes (treat such a log as sensitive). */
  policyEvidence?: boolean;
  /** "effects" (default): a call that can change something waits for its decision's fdatasync; a read's decision is written at once and synced within 100 ms. "all": every decision is synced before its call runs. */
  logSync?: LogSync;
  /** Who approves calls that need a person; none means deny. CallOptions.approver wins. */
  approver?: Approver;
  /**
   * The client shape's backends: content tools read and write through the client, local_shell runs
   * in its terminals, approvals go to it. Required for `shape: "client"`; see acpClient() in
   * src/transports/acp/backends.ts for an ACP client.
   */
  acp?: ClientBackends;
  /** Secret values the disclosure gate must know besides the environment's (name → value). */
  knownSecrets?: Record<string, string>;
}

export interface Host {
  /** Where local_fs works: the (first) workspace, or its `_allowed_dir`; relative paths resolve here. */
  readonly root: string;
  /** The (first) workspace folder itself (`--root`, the client's first root), canonical. */
  readonly workspace: string;
  /** Every root served, the first one first (several with MCP roots); empty when the client took them all away. */
  roots(): readonly ServedRoot[];
  /**
   * Serve these workspace folders from now on (a client's MCP roots), the first one the default for
   * relative paths; a call running in a dropped root finishes, no new call reaches it. A folder that
   * is missing (or lacks `_allowed_dir`) is not served and is named in `refused`.
   */
  serveRoots(
    workspaces: readonly string[],
  ): Promise<{ served: ServedRoot[]; refused: { folder: string; why: string }[] }>;
  readonly state: StateDir;
  /** The config in force (see reload). */
  readonly config: Config;
  /** The toolsets' settings, parsed once here: every call's tools read these (frozen) values; reload replaces them. */
  readonly settings: Settings;
  /** The config file read at start (and by reload), or where it would be. */
  readonly configFile: string;
  readonly agent?: string;
  readonly shape: Shape;
  /** The envelope in force, resolved along its extends chain. */
  readonly envelope: Envelope;
  /**
   * Read the config file again; when it changed and is valid, its envelope, tools_policies and tools
   * take over for the next call (logged as config_reloaded) and onReload's listeners hear of it. An
   * invalid file changes nothing and is named in `error`. A host given `config` has no file to read.
   */
  reload(): Promise<{ changed: boolean; error?: string }>;
  /** Called after each reload that changed the config; returns the unsubscribe. */
  onReload(listener: () => void): () => void;
  /** The policy log's path (the default one is created at the first call). */
  readonly policyLog: string;
  /** One line: whether the processes latch starts run contained, in which mode, with network or not. */
  readonly containment: string;
  /** The tools this host offers, in registry order: those of its shape and its agent's toolsets. */
  tools(): ToolSpec[];
  call(tool: string, args: unknown, opts?: CallOptions): Promise<CallResult>;
  /** Tell the disclosure gate of a secret it must never let out (the HTTP bearer token made after start). */
  knowSecret(name: string, value: string): void;
  explain(tool: string, args: unknown, opts?: CallOptions): Promise<Explanation>;
  /**
   * Cancel the running calls, wait (bounded) for their cleanup, log each one's outcome (`interrupted`
   * if it ended cancelled or did not end) and close; later calls are refused. Returns how many ran.
   */
  shutdown(why: string): Promise<number>;
  /** A client session ended: its background processes are stopped (and waited for). Returns how many ran. */
  endSession(session: string): Promise<number>;
  close(): void;
}

export interface ServedRoot {
  /** The workspace folder (an MCP root), canonical. */
  workspace: string;
  /** Where the tools work in it: the workspace, or its `_allowed_dir`. */
  root: string;
}

export async function createHost(opts: HostOptions): Promise<Host> {
  const env = opts.env ?? process.env;
  let config = opts.config ?? loadConfig(opts.configPath, env);
  const shape = opts.shape ?? "workspace";
  if (shape === "client" && !opts.acp)
    throw new ConfigError(
      "The client shape needs a client: pass `acp` (acpClient(...) for an ACP connection), or use the workspace shape.",
    );
  if (shape !== "client" && opts.acp)
    throw new ConfigError(`\`acp\` is for the client shape only; this host's shape is \`${shape}\`.`);
  /** What one version of the config makes, at start and at each reload: the settings (their one parse), the tools, the policy. */
  const derive = (cfg: Config) => {
    const set = parseSettings(cfg, opts.agent);
    return { set, tools: listTools(cfg, opts.agent, shape, set, env, opts.acp?.offers), setup: policySetup(cfg, opts) };
  };
  const { set: settings, tools: listed, setup } = derive(config);
  const place = async (folder: string, settings: Settings): Promise<ServedRoot> => {
    const workspace = await existingFolder(folder, "root");
    const allowed = settings.local_fs.allowedDir;
    const root = allowed
      ? await existingFolder(path.resolve(workspace, allowed), "tools_policies.local_fs._allowed_dir")
      : workspace;
    return { workspace, root };
  };
  const first = await place(opts.root, settings);
  const state = openStateDir(opts.stateDir ? path.resolve(opts.stateDir) : defaultStateDir(env));
  const configFile = config.file ?? chooseConfigPath(opts.configPath, env).file;
  const logFile = opts.policyLog !== undefined ? path.resolve(opts.policyLog) : defaultLogPath(state.dir);
  const controlPlane = [state.dir, await canonicalize(configFile), await canonicalize(logFile)];
  if (opts.policyLogDir) controlPlane.push(await canonicalize(path.resolve(opts.policyLogDir)));
  const startupEnv = Object.freeze({ ...env });
  const loaded = (programs: PolicySetup["programs"], set: Settings, workspaces: string[]) =>
    loadedControlPlane({ workspaces, root: first.root, programs, settings: set, startupEnv });
  controlPlane.push(...(await loaded(setup.programs, settings, [first.workspace])));
  const ledger = new Ledger(state.db);

  const known: Record<string, string> = { ...opts.knownSecrets };
  const hmacKey = disclosureKey(state.dir);
  const scanner = () => new DisclosureScanner(knownNeedles(startupEnv, known), hmacKey);
  const startupPath = pathDirs(env.PATH);
  let log: RunLog;
  let heads: LogHeads | undefined;
  // Retention runs at start and again at close, when this run's own log is finished and counted.
  const retention = retentionOf(config, opts.logRetention);
  const logsDir = opts.policyLogDir ? path.resolve(opts.policyLogDir) : path.join(state.dir, "logs");
  const prune = () => {
    if (!retention) return;
    try {
      pruneRunLogs(logsDir, retention, logFile, heads);
    } catch (err) {
      throw new ConfigError(
        `The log retention cannot prune ${logsDir} (${(err as Error).message}). Fix the folder's permissions, or remove [log] from the config.`,
      );
    }
  };
  try {
    const info = {
      configSha256: config.sha256 ?? null,
      programs: setup.programs,
      posture: setup.programs.length ? setup.posture : null,
      evidence: opts.policyEvidence === true,
      envelope: setup.envelope.name,
    };
    heads = new LogHeads(state.db);
    log = new RunLog(logFile, info, opts.policyLog !== undefined, heads);
    prune();
  } catch (err) {
    heads?.close();
    ledger.close();
    if (err instanceof LogWriteError) throw new ConfigError(err.message);
    throw err;
  }
  const logSync = opts.logSync ?? "effects";
  if (logSync !== "effects" && logSync !== "all")
    throw new ConfigError(`Expected \`logSync\` to be "effects" or "all", got \`${String(logSync)}\`.`);
  const inFlight = new InFlight();
  let closed = false;
  const background = new BackgroundProcesses();
  const close = () => {
    if (closed) return;
    closed = true;
    void background.closeAll(); // stops every background process (SIGTERM, then SIGKILL)
    ctx.scanner.close();
    log.finish();
    try {
      prune();
    } catch {
      // closing goes on; the next start prunes again, and says so if it still cannot
    }
    heads?.close();
    ledger.close();
  };
  const ctx: HostContext = {
    ...first,
    settings,
    state,
    ledger,
    controlPlane,
    listed,
    policy: setup,
    approver: opts.acp?.approver ?? opts.approver,
    files: opts.acp?.files ?? LOCAL_FILES,
    processes: opts.acp?.processes ?? LOCAL_PROCESSES,
    background,
    log,
    logSync,
    startupEnv,
    startupPath,
    scanner: scanner(),
    // Only hosts that can start processes need to know (a cached probe: one bwrap run per process).
    probe:
      shape === "client"
        ? IN_CLIENT
        : listed.some((t) => t.axis === "shell")
          ? await probeContainment(startupPath)
          : NOT_PROBED,
  };
  // Several roots (MCP): one context per root over the same state, log and policy; the first serves
  // relative paths, a path in another one plans its call there (pipeline.ts planCall).
  let served: HostContext[] = [];
  const serve = (places: readonly ServedRoot[]) => {
    const unique = places.filter((p, i) => places.findIndex((q) => q.root === p.root) === i);
    const next: HostContext[] = unique.map((p) => ({ ...ctx, ...p }));
    for (const c of next) {
      c.otherRoots = next.filter((o) => o !== c).map((o) => o.root);
      c.rootContext = (r) => next.find((o) => o.root === r);
    }
    served = next;
  };
  serve([first]);
  let primary = first;
  const reloaded = new Set<() => void>();
  const current = () => served[0];
  return {
    get root() {
      return primary.root;
    },
    get workspace() {
      return primary.workspace;
    },
    roots: () => served.map((c) => ({ workspace: c.workspace, root: c.root })),
    serveRoots: async (folders) => {
      const places: ServedRoot[] = [];
      const refused: { folder: string; why: string }[] = [];
      for (const folder of folders) {
        try {
          places.push(await place(folder, ctx.settings));
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          refused.push({ folder, why: err.message });
        }
      }
      serve(places);
      if (places.length) primary = places[0];
      return { served: places, refused };
    },
    state,
    get config() {
      return config;
    },
    get settings() {
      return ctx.settings;
    },
    configFile,
    agent: opts.agent,
    shape,
    tools: () => [...ctx.listed],
    reload: async () => {
      if (opts.config) return { changed: false };
      let next;
      try {
        const cfg = loadConfig(opts.configPath, env);
        if (cfg.sha256 === config.sha256) return { changed: false };
        const made = derive(cfg);
        const places = await Promise.all(served.map((c) => place(c.workspace, made.set)));
        const plane = await loaded(
          made.setup.programs,
          made.set,
          served.map((c) => c.workspace),
        );
        next = { cfg, places, plane, ...made };
      } catch (err) {
        if (err instanceof ConfigError) return { changed: false, error: err.message };
        throw err;
      }
      // A config that turns the shell on needs the sandbox probed, as at start.
      if (ctx.probe === NOT_PROBED && next.tools.some((t) => t.axis === "shell"))
        ctx.probe = await probeContainment(startupPath);
      try {
        log.configReloaded({
          configSha256: next.cfg.sha256 ?? null,
          programs: next.setup.programs,
          envelope: next.setup.envelope.name,
        });
      } catch (err) {
        if (err instanceof LogWriteError) return { changed: false, error: err.message }; // not on record: not in force
        throw err;
      }
      config = next.cfg;
      // Every served context holds this same array: what the new config loads joins the control plane.
      for (const c of next.plane) if (!controlPlane.includes(c)) controlPlane.push(c);
      Object.assign(ctx, { settings: next.set, policy: next.setup, listed: next.tools });
      serve(next.places);
      if (next.places.length) primary = next.places[0];
      for (const l of [...reloaded]) l();
      return { changed: true };
    },
    onReload: (listener) => {
      reloaded.add(listener);
      return () => reloaded.delete(listener);
    },
    call: (tool, args, callOpts = {}) => {
      const c = current();
      if (!c) return Promise.resolve(NO_ROOT);
      return inFlight.run(callOpts, (o) => runCall(c, tool, args, o).then(shortened));
    },
    knowSecret: (name, value) => {
      known[name] = value;
      ctx.scanner.close();
      ctx.scanner = scanner();
      for (const c of served) c.scanner = ctx.scanner;
    },
    explain: (tool, args, callOpts = {}) => {
      const c = current();
      if (!c) return Promise.resolve({ tool, decision: "deny", reason: NO_ROOT.reason, gates: [] });
      return explainCall(c, tool, args, callOpts);
    },
    get envelope() {
      return ctx.policy.envelope;
    },
    policyLog: logFile,
    get containment() {
      return containmentLine(ctx.settings, ctx.probe);
    },
    shutdown: async (why) => {
      log.interrupt();
      const n = await inFlight.stop(why);
      await background.closeAll();
      close();
      return n;
    },
    endSession: (session) => background.endSession(session),
    close,
  };
}

/** The envelope, the pinned programs and the posture; bad names or programs stop startup. */
function policySetup(config: Config, opts: HostOptions): PolicySetup {
  const agentEnvelope = opts.agent === undefined ? undefined : config.agents[opts.agent]?.envelope;
  const name = opts.envelope ?? agentEnvelope ?? DEFAULT_ENVELOPE;
  let envelope: Envelope;
  try {
    envelope = resolveEnvelope(name, allDefinitions(config.envelopes ?? {}));
  } catch (err) {
    if (err instanceof EnvelopeError) throw new ConfigError(`${config.file ?? "agents.toml"}: ${err.message}.`);
    throw err;
  }
  let programs;
  try {
    programs = loadPrograms([...(config.policyPrograms ?? []), ...(opts.policyPrograms ?? [])]);
  } catch (err) {
    if (err instanceof ProgramLoadError) throw new ConfigError(err.message);
    throw err;
  }
  if (opts.posture !== undefined && programs.length === 0) {
    throw new ConfigError(
      `A default authorization (\`${opts.posture}\`) needs at least one policy program: pass --policy PROGRAM, or drop --default-authorization.`,
    );
  }
  if (opts.posture !== undefined && opts.policyLog === undefined) {
    throw new ConfigError(
      `A default authorization (\`${opts.posture}\`) needs a fresh --policy-log FILE, so its decisions are on record.`,
    );
  }
  return { envelope, programs, posture: opts.posture ?? opts.defaultPosture ?? "deny-unless-allowed" };
}

/** Every root was taken away (the client's MCP roots list is empty): nothing is served until one comes back. */
const NO_ROOT = {
  status: "refused",
  reason: "No folder is served: your MCP client offers no root now, so latch's tools reach no files.",
  hint: "Ask the user to open a folder (a root) in the client; then retry.",
  gate: "roots",
} as const;

/** The client shape's processes run in the client's terminals: latch's sandbox is not around them. */
const IN_CLIENT: ProbeResult = {
  available: false,
  reason: "in the client shape, commands run in the ACP client's terminals, outside latch's sandbox",
  fix: "Use the workspace shape for contained commands.",
};

function listTools(
  config: Config,
  agent: string | undefined,
  shape: Shape,
  settings: Settings,
  env: Readonly<NodeJS.ProcessEnv>,
  offers?: readonly ClientCapability[],
): ToolSpec[] {
  const wanted = agentToolsets(config, agent);
  return TOOLS.filter(
    (t) =>
      t.shapes.includes(shape) &&
      (shape !== "client" || (t.clientNeeds ?? []).every((n) => offers?.includes(n))) &&
      (wanted === undefined || wanted.includes(t.toolset)) &&
      (t.enabled?.(settings, env) ?? true),
  );
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

/** The config's `[log]` and `--log-retention` together: the stricter of two day limits. */
function retentionOf(config: Config, flag: Retention | undefined): Retention | undefined {
  const days = [config.log?.retentionDays, flag?.days].filter((d) => d !== undefined);
  const r: Retention = {
    ...(days.length ? { days: Math.min(...days) } : {}),
    ...(config.log?.maxFiles !== undefined ? { maxFiles: config.log.maxFiles } : {}),
    ...(flag?.maxFiles !== undefined ? { maxFiles: Math.min(flag.maxFiles, config.log?.maxFiles ?? Infinity) } : {}),
    ...(flag?.bytes !== undefined ? { bytes: flag.bytes } : {}),
  };
  return Object.keys(r).length ? r : undefined;
}
