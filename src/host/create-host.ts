// createHost: everything a call needs, prepared once (root, config, state, ledger), and the one call
// path every transport goes through.
import { BackgroundProcesses } from "../shell/background.js";
import path from "node:path";
import { ConfigError, chooseConfigPath, loadConfig, type Config } from "../config/load.js";
import type { Settings } from "../config/settings.js";
import type { ToolSpec } from "../tools/define.js";
import { Ledger } from "../fs/ledger.js";
import { locksRemoved } from "../fs/lock.js";
import { PreImages } from "../fs/preimages.js";
import { canonicalize } from "../fs/paths.js";
import { openStateDir, defaultStateDir, type StateDir } from "../fs/state.js";
import { sweepTrash, trashIn } from "../fs/same-file.js";
import { InFlight } from "./inflight.js";
import { placeRoot, ServedRoots, type ServedRoot } from "./roots.js";
import { snapshotOf, type ConfigSnapshot, type SnapshotOptions } from "./snapshot.js";
import { shortened } from "./short.js";
import { runCall } from "./pipeline.js";
import { explainCall } from "./explain.js";
import { prepareCall } from "./prepare.js";
import { PreparedApprovals } from "../approval/prepared.js";
import type { PolicySetup } from "../policy/gates.js";
import { LogWriteError } from "../audit/log.js";
import { LogHeads } from "../audit/log-heads.js";
import { pruneRunLogs, type Retention } from "../audit/log-files.js";
import { defaultLogPath, RunLog, type LogCopy } from "../audit/run-log.js";
import { loadSealKey } from "../audit/seal.js";
import { containmentLine } from "./containment.js";
import { loadedControlPlane } from "./control-plane.js";
import { NOT_PROBED, probeContainment } from "../sandbox/probe.js";
import { pathDirs } from "../sandbox/probe-run.js";
import type { ProbeResult } from "../sandbox/types.js";
import { LOCAL_PROCESSES } from "../process/backend.js";
import { LOCAL_FILES } from "../fs/backend.js";
import { DisclosureScanner } from "../disclose/scanner.js";
import { FolderIndex } from "../browse/find-index.js";
import { openStore, stateUrlOf } from "../store/open.js";
import type { StateStore } from "../store/types.js";
import { knownNeedles } from "../disclose/known.js";
import { disclosureKey } from "../disclose/key.js";
import { attachedSecrets, attachesServers, openAttached, startsServers, type Attached } from "./attached.js";
import { agentToolsets, toolNamed } from "../registry.js";
import { anySkillFolder, skillFolderPlaces } from "../skills/files.js";
import type { Host, HostOptions } from "./host.js";
import type { CallResult } from "./types.js";

export type { Host, HostOptions } from "./host.js";

export async function createHost(opts: HostOptions): Promise<Host> {
  const env = opts.env ?? process.env;
  const config = opts.config ?? loadConfig(opts.configPath, env);
  const shape = opts.shape ?? "workspace";
  if (shape === "client" && !opts.acp)
    throw new ConfigError(
      "The client shape needs a client: pass `acp` (acpClient(...) for an ACP connection), or use the workspace shape.",
    );
  if (shape !== "client" && opts.acp)
    throw new ConfigError(`\`acp\` is for the client shape only; this host's shape is \`${shape}\`.`);
  const snapshotOpts: SnapshotOptions = { ...opts, shape, env, offers: opts.acp?.offers };
  let snap = snapshotOf(config, snapshotOpts);
  const startupPath = pathDirs(env.PATH);
  // Only hosts that can start processes need to know (a cached probe: one bwrap run per process).
  const probeFor = async (tools: readonly ToolSpec[]): Promise<ProbeResult> =>
    shape === "client"
      ? IN_CLIENT
      : tools.some((t) => t.axis === "shell") || startsServers(config)
        ? probeContainment(startupPath)
        : NOT_PROBED;
  // Started first: bwrap runs beside the rest of the start (the state dir, the log), awaited at its end;
  // or, with probeAfterStart, at probed() or the first call of a tool that starts processes (which waits for it).
  const probing = opts.probeAfterStart ? undefined : probeFor(snap.listed);
  probing?.catch(() => undefined); // a start that fails before the await leaves no unhandled rejection
  const first = await placeRoot(opts.root, snap.settings);
  const state = openStateDir(opts.stateDir ? path.resolve(opts.stateDir) : defaultStateDir(env));
  sweepTrash(trashIn(state.dir)); // what a killed removal left there (src/fs/same-file.ts)
  const configFile = config.file ?? chooseConfigPath(opts.configPath, env).file;
  const logFile = opts.policyLog !== undefined ? path.resolve(opts.policyLog) : defaultLogPath(state.dir);
  const controlPlane = [state.dir, await canonicalize(configFile), await canonicalize(logFile)];
  if (opts.policyLogDir) controlPlane.push(await canonicalize(path.resolve(opts.policyLogDir)));
  const startupEnv = Object.freeze({ ...env });
  const loaded = (programs: PolicySetup["programs"], set: Settings, workspaces: string[]) =>
    loadedControlPlane({ workspaces, root: first.root, programs, settings: set, startupEnv });
  for (const item of await loaded(snap.policy.programs, snap.settings, [first.workspace])) controlPlane.push(item);
  const ledger = new Ledger(state.db);
  let store: StateStore;
  try {
    store = await openStore(stateUrlOf(opts.stateUrl, env), state);
  } catch (err) {
    ledger.close();
    throw err;
  }

  // The values the attached servers' configs reference are secrets the disclosure gate must know.
  const known: Record<string, string> = {
    ...(await attachedSecrets(config, startupEnv)),
    ...opts.knownSecrets,
  };
  const hmacKey = disclosureKey(state.dir);
  let scanner = new DisclosureScanner(knownNeedles(startupEnv, known), hmacKey);
  const copy = store.mirrorRun?.({ file: logFile, workspace: first.workspace });
  const { log, heads, prune } = openRunLog({ config, opts, state, logFile, snap, ledger, copy, store });
  const logSync = opts.logSync ?? "effects";
  if (logSync !== "effects" && logSync !== "all")
    throw new ConfigError(`Expected \`logSync\` to be "effects" or "all", got \`${String(logSync)}\`.`);
  const preimages = new PreImages(state.db, { db: ledger.db });
  const inFlight = new InFlight();
  let closed = false;
  let storeClosed: Promise<void> = Promise.resolve();
  // The budget is read once: a session's processes outlive a config reload.
  const background = new BackgroundProcesses({ sessionBudget: snap.settings.local_shell.sessionMemoryBytes });
  const close = () => {
    if (closed) return;
    closed = true;
    void background.closeAll(); // stops every background process (SIGTERM, then SIGKILL)
    scanner.close();
    log.finish();
    try {
      prune();
    } catch {
      // closing goes on; the next start prunes again, and says so if it still cannot
    }
    heads.close();
    preimages.close();
    ledger.close(); // last: the undo store and the heads borrow its connection
    // The policy log's last lines and checkpoint go to the store (bounded); shutdown waits for it.
    storeClosed = store.close().catch(() => undefined);
    void attached?.close(); // stops every attached server's process group
  };
  let probe = probing ? await probing : NOT_PROBED;
  let probeDone = probing !== undefined;
  let probeRun: Promise<void> | undefined;
  const probed = (): Promise<void> =>
    probeDone
      ? Promise.resolve()
      : (probeRun ??= probeFor(snap.listed).then((p) => {
          probe = p;
          probeDone = true;
          roots.rebuild(); // the served contexts hold the probe
        }));
  /**
   * `run` once the probe has answered, for a call that reads it: a tool that starts processes (axis
   * "shell": its containment, and `_containment = "required"`'s refusal, come from the probe). Any
   * other call runs at once, so a host that probes after its start (probeAfterStart) serves reads,
   * edits and the skill index while bwrap's run goes on.
   */
  const whenProbed = <T>(
    tool: string,
    run: () => Promise<T>,
    orElse?: { signal?: AbortSignal; aborted: T },
  ): Promise<T> =>
    probeDone || !startsProcesses(tool)
      ? run()
      : untilProbed(orElse?.signal).then((ok) => (ok ? run() : orElse!.aborted));
  /** true once the probe has answered; false if `signal` aborts first (a shutdown cancels a call waiting for it). */
  const untilProbed = (signal?: AbortSignal): Promise<boolean> => {
    if (!signal) return probed().then(() => true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      const answered = () => {
        signal.removeEventListener("abort", onAbort);
        resolve(true); // a probe that failed: the call then reports it
      };
      signal.addEventListener("abort", onAbort, { once: true });
      probed().then(answered, answered);
    });
  };
  const startsProcesses = (name: string): boolean => toolNamed(listed(snap), name)?.axis === "shell";
  // The attached servers start with the host (src/host/attached.ts); their tools join the list.
  let attached: Attached | undefined;
  const reloaded = new Set<() => void>();
  const attachedFor = (s: ConfigSnapshot): ToolSpec[] => {
    const wanted = agentToolsets(s.config, opts.agent);
    return [...(attached?.specs() ?? [])].filter((t) => wanted === undefined || wanted.includes(t.toolset));
  };
  const listed = (s: ConfigSnapshot): readonly ToolSpec[] => [...s.listed, ...attachedFor(s)];
  // What every call context shares; the snapshot, the probe and the scanner are read as they are now.
  const services = {
    state,
    ledger,
    preimages,
    controlPlane,
    approver: opts.acp?.approver ?? opts.approver,
    files: opts.acp?.files ?? LOCAL_FILES,
    processes: opts.acp?.processes ?? LOCAL_PROCESSES,
    background,
    log,
    logSync,
    startupEnv,
    startupPath,
    prepared: new PreparedApprovals(),
    folderIndex: new FolderIndex(),
  };
  const roots = new ServedRoots(first, (place) => ({
    ...services,
    settings: snap.settings,
    listed: listed(snap),
    unlisted: (name: string) => attached?.unlisted(name),
    policy: snap.policy,
    probe,
    scanner,
    ...place,
  }));
  if (attachesServers(config)) {
    await probed(); // the attached servers start contained, now
    try {
      attached = await openAttached(
        config,
        { workspace: first.workspace, controlPlane, startupEnv, startupPath, probe },
        state.db,
        () => {
          roots.rebuild();
          for (const l of [...reloaded]) l();
        },
      );
    } catch (err) {
      close();
      throw err;
    }
    roots.rebuild();
  }
  return {
    get root() {
      return roots.primary.root;
    },
    get workspace() {
      return roots.primary.workspace;
    },
    roots: () => roots.list(),
    serveRoots: async (folders) => {
      const places: ServedRoot[] = [];
      const refused: { folder: string; why: string }[] = [];
      for (const folder of folders) {
        try {
          places.push(await placeRoot(folder, snap.settings));
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          refused.push({ folder, why: err.message });
        }
      }
      roots.serve(places);
      return { served: places, refused };
    },
    state,
    store,
    get config() {
      return snap.config;
    },
    get settings() {
      return snap.settings;
    },
    configFile,
    agent: opts.agent,
    shape,
    tools: () => [...listed(snap)],
    mayHoldSkills: () => {
      const c = roots.current();
      return c !== undefined && anySkillFolder({ root: c.root, settings: snap.settings, startupEnv });
    },
    listingInputs: () => {
      if (opts.policyLog !== undefined) return undefined;
      const c = roots.current();
      const allowed = snap.settings.local_fs.allowedDir;
      // The folders as given too: a link among them that now leads elsewhere resolves to another root.
      const folders = [
        path.resolve(opts.root),
        ...roots.list().flatMap((r) => [r.root, r.workspace, ...(allowed ? [path.resolve(r.workspace, allowed)] : [])]),
        ...(c ? skillFolderPlaces({ root: c.root, settings: snap.settings, startupEnv }) : []),
      ];
      const files = [
        ...snap.policy.programs.map((p) => p.path),
        ...(opts.policyEvidenceSeal !== undefined ? [path.resolve(opts.policyEvidenceSeal)] : []),
      ];
      // The config as this host read it: an edit since then is another config.
      const read = snap.config.sha256 !== undefined ? `sha256:${snap.config.sha256}` : "absent";
      return [
        { path: configFile, by: "text" as const, stamp: read },
        ...files.map((f) => ({ path: f, by: "content" as const })),
        ...folders.map((f) => ({ path: f, by: "identity" as const })),
      ];
    },
    get gateway() {
      return attached?.gateway;
    },
    approveServer: async (name) => {
      if (!attached) throw new ConfigError("The config attaches no server: add an [mcp_servers.NAME] table first.");
      return attached.gateway.approve(name, (tools, removed) => log.serversApproved(name, tools, removed));
    },
    reload: async () => {
      if (opts.config) return { changed: false };
      let next;
      try {
        const cfg = loadConfig(opts.configPath, env);
        if (cfg.sha256 === snap.config.sha256) return { changed: false };
        const made = snapshotOf(cfg, snapshotOpts);
        const places = await Promise.all(roots.workspaces().map((w) => placeRoot(w, made.settings)));
        const plane = await loaded(made.policy.programs, made.settings, roots.workspaces());
        next = { snap: made, places, plane };
      } catch (err) {
        if (err instanceof ConfigError) return { changed: false, error: err.message };
        throw err;
      }
      await probed();
      // A config that turns the shell on needs the sandbox probed, as at start.
      const nextProbe = probe === NOT_PROBED ? await probeFor(next.snap.listed) : probe;
      try {
        log.configReloaded({
          configSha256: next.snap.config.sha256 ?? null,
          programs: next.snap.policy.programs,
          envelope: next.snap.policy.envelope.name,
        });
      } catch (err) {
        if (err instanceof LogWriteError) return { changed: false, error: err.message }; // not on record: not in force
        throw err;
      }
      // Every served context holds this same array: what the new config loads joins the control plane.
      for (const c of next.plane) if (!controlPlane.includes(c)) controlPlane.push(c);
      snap = next.snap;
      probe = nextProbe;
      roots.serve(next.places);
      for (const l of [...reloaded]) l();
      return { changed: true };
    },
    onReload: (listener) => {
      reloaded.add(listener);
      return () => reloaded.delete(listener);
    },
    // Running from its start: a call waiting for the probe is one a shutdown cancels and callsEnded() awaits.
    call: (tool, args, callOpts = {}) =>
      inFlight.run(callOpts, (o) =>
        whenProbed(
          tool,
          (): Promise<CallResult> => {
            const c = roots.current();
            if (!c) return Promise.resolve(NO_ROOT);
            return runCall(c, tool, args, o).then(shortened);
          },
          { signal: o.signal, aborted: CANCELLED_BEFORE_PROBE },
        ),
      ),
    prepare: (tool, args, callOpts = {}) =>
      whenProbed(tool, () => {
        const c = roots.current();
        if (!c) return Promise.resolve({ action: "deny" as const, reason: NO_ROOT.reason });
        return prepareCall(c, tool, args, { session: callOpts.session, signal: callOpts.signal });
      }),
    knowSecret: (name, value) => {
      known[name] = value;
      scanner.close();
      scanner = new DisclosureScanner(knownNeedles(startupEnv, known), hmacKey);
      roots.rebuild();
    },
    explain: (tool, args, callOpts = {}) =>
      whenProbed(tool, () => {
        const c = roots.current();
        if (!c) return Promise.resolve({ tool, decision: "deny" as const, reason: NO_ROOT.reason, gates: [] });
        return explainCall(c, tool, args, callOpts);
      }),
    get envelope() {
      return snap.policy.envelope;
    },
    policyLog: logFile,
    get containment() {
      return containmentLine(snap.settings, probe);
    },
    probed,
    callsEnded: (waitMs) => inFlight.idle(waitMs),
    shutdown: async (why) => {
      log.interrupt();
      const n = await inFlight.stop(why);
      await locksRemoved(); // the calls' released locks, off disk
      await background.closeAll();
      await attached?.close();
      close();
      await storeClosed;
      return n;
    },
    endSession: (session) => background.endSession(session),
    close,
  };
}

/**
 * The run's policy log and the kept heads; retention runs at start and again at close, when this
 * run's own log is finished and counted. A log that cannot be opened stops startup, with the ledger closed.
 */
function openRunLog(o: {
  config: Config;
  opts: HostOptions;
  state: StateDir;
  logFile: string;
  snap: ConfigSnapshot;
  ledger: Ledger;
  copy?: LogCopy;
  store: StateStore;
}): { log: RunLog; heads: LogHeads; prune: () => void } {
  const retention = retentionOf(o.config, o.opts.logRetention);
  const logsDir = o.opts.policyLogDir ? path.resolve(o.opts.policyLogDir) : path.join(o.state.dir, "logs");
  let heads: LogHeads | undefined;
  const prune = () => {
    if (!retention) return;
    try {
      pruneRunLogs(logsDir, retention, o.logFile, heads);
    } catch (err) {
      throw new ConfigError(
        `The log retention cannot prune ${logsDir} (${(err as Error).message}). Fix the folder's permissions, or remove [log] from the config.`,
      );
    }
  };
  try {
    const { policy } = o.snap;
    const info = {
      configSha256: o.config.sha256 ?? null,
      programs: policy.programs,
      posture: policy.programs.length ? policy.posture : null,
      evidence: o.opts.policyEvidence === true || o.opts.policyEvidenceSeal !== undefined,
      envelope: policy.envelope.name,
      ...(o.opts.policyEvidenceSeal !== undefined ? { seal: loadSealKey(o.opts.policyEvidenceSeal) } : {}),
    };
    heads = new LogHeads(o.state.db, { db: o.ledger.db });
    const log = new RunLog(o.logFile, info, o.opts.policyLog !== undefined, heads, o.copy);
    prune();
    return { log, heads, prune };
  } catch (err) {
    heads?.close();
    o.ledger.close();
    void o.store.close();
    if (err instanceof LogWriteError) throw new ConfigError(err.message);
    throw err;
  }
}

/** Every root was taken away (the client's MCP roots list is empty): nothing is served until one comes back. */
const NO_ROOT = {
  status: "refused",
  reason: "No folder is served: your MCP client offers no root now, so latch's tools reach no files.",
  hint: "Ask the user to open a folder (a root) in the client; then retry.",
  gate: "roots",
} as const;

/** A call of a tool that starts processes, cancelled while it waited for the sandbox probe: nothing was decided or run. */
const CANCELLED_BEFORE_PROBE: CallResult = {
  status: "error",
  code: "ECANCELED",
  message: "The call was cancelled before it ran (while latch was still probing its sandbox).",
};

/** The client shape's processes run in the client's terminals: latch's sandbox is not around them. */
const IN_CLIENT: ProbeResult = {
  available: false,
  reason: "in the client shape, commands run in the ACP client's terminals, outside latch's sandbox",
  fix: "Use the workspace shape for contained commands.",
};

/** The config's `[log]` and `--log-retention` together: the stricter of two day limits. */
function retentionOf(config: Config, flag: Retention | undefined): Retention | undefined {
  const days = [config.log?.retentionDays, flag?.days].filter((d) => d !== undefined);
  const r: Retention = {
    ...(days.length ? { days: days.reduce((a, b) => Math.min(a, b)) } : {}),
    ...(config.log?.maxFiles !== undefined ? { maxFiles: config.log.maxFiles } : {}),
    ...(flag?.maxFiles !== undefined ? { maxFiles: Math.min(flag.maxFiles, config.log?.maxFiles ?? Infinity) } : {}),
    ...(flag?.bytes !== undefined ? { bytes: flag.bytes } : {}),
  };
  return Object.keys(r).length ? r : undefined;
}
