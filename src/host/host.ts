// What a host is and what it is made from: the API every shape (MCP, ACP, the CLI, an embedding agent)
// holds. createHost() in create-host.ts builds one; the one call path (pipeline.ts) runs its calls.
import type { Approver } from "../approval/approver.js";
import type { Retention } from "../audit/log-files.js";
import type { Config } from "../config/load.js";
import type { Settings } from "../config/settings.js";
import type { StateDir } from "../fs/state.js";
import type { Gateway } from "../gateway/gateway.js";
import type { PinCheck } from "../gateway/pins.js";
import type { Envelope } from "../policy/envelope.js";
import type { Posture } from "../policy/programs.js";
import type { StateStore } from "../store/types.js";
import type { Shape, ToolSpec } from "../tools/define.js";
import type { ClientBackends } from "./client.js";
import type { LogSync } from "./context.js";
import type { ServedRoot } from "./roots.js";
import type { CallOptions, CallResult, Explanation, Prepared } from "./types.js";

export interface HostOptions {
  /** The workspace folder. */
  root: string;
  configPath?: string;
  /** An already-loaded config (tests, embedders); wins over configPath. */
  config?: Config;
  agent?: string;
  stateDir?: string;
  /**
   * `--state postgres://…` (else LATCH_STATE_URL): the approval queue and a copy of every policy-log
   * record (with signed checkpoints) in a fleet's PostgreSQL; the read ledger stays in the state dir.
   */
  stateUrl?: string;
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
  /**
   * `--policy-evidence-seal`: a file with the operator's X25519 public key (PEM). Implies evidence; a
   * result the disclosure gate redacted or withheld is also kept whole, encrypted to that key
   * (src/audit/seal.ts), for `latch log unseal`.
   */
  policyEvidenceSeal?: string;
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
  /**
   * The sandbox probe (one bwrap run) starts at probed() or the first call of a tool that starts
   * processes, not while the host is made: `latch mcp` over stdio answers its client's first messages
   * meanwhile. Calls of such tools (axis "shell") wait for it; the others, which never read it, do not.
   */
  probeAfterStart?: boolean;
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
  /** The approval queue (and, on PostgreSQL, the policy log's copy): the state dir's SQLite, or a fleet's PostgreSQL. */
  readonly store: StateStore;
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
  /** One line: whether the processes latch starts run contained, in which mode, with network or not (after probed()). */
  readonly containment: string;
  /** Resolves once the sandbox probe has answered; starts it for a host made with probeAfterStart. */
  probed(): Promise<void>;
  /** The tools this host offers, in registry order: those of its shape and its agent's toolsets; then the attached servers' tools. */
  tools(): ToolSpec[];
  /**
   * Whether a skill folder exists for the skill tool to find (the user's, the config's, the workspace's):
   * false means the skill index is empty, known without a call (MCP's tools/list asks, at every start).
   */
  mayHoldSkills(): boolean;
  /**
   * What the tool list and the instructions are made from, beside the arguments and the environment:
   * the config file (by the hash of the text this host read), the policy programs and the evidence
   * seal's key (by their content: a start fails without them), and by their identity (which folder, or
   * none) every root and workspace as given and as resolved, and every folder a skill may be in. A
   * start's answers kept for the next (src/transports/mcp/answer-cache.ts) stand while each is as it
   * was. Undefined: a later start with the same arguments is refused (a --policy-log file, which is
   * never appended to), so none is kept.
   */
  listingInputs(): { path: string; by: "content" | "identity" | "text"; stamp?: string }[] | undefined;
  /** The attached MCP servers (`[mcp_servers.X]`), when the config names any. */
  readonly gateway?: Gateway;
  /**
   * Pin the tools the server sends now (`latch servers approve`), logged before they are offered;
   * returns each tool's state before, with the diffs a person reviews.
   */
  approveServer(name: string): Promise<PinCheck[]>;
  call(tool: string, args: unknown, opts?: CallOptions): Promise<CallResult>;
  /**
   * Decide without running: the action and reason, and for "approve" the exact diff a person must see
   * with the id and sha256 that host.call's `approval` carries back with their answer.
   */
  prepare(tool: string, args: unknown, opts?: Pick<CallOptions, "session" | "signal">): Promise<Prepared>;
  /** Tell the disclosure gate of a secret it must never let out (the HTTP bearer token made after start). */
  knowSecret(name: string, value: string): void;
  explain(tool: string, args: unknown, opts?: CallOptions): Promise<Explanation>;
  /** Resolves once no call is running (one started meanwhile is waited for too), or after `waitMs`. */
  callsEnded(waitMs: number): Promise<void>;
  /**
   * Cancel the running calls, wait (bounded) for their cleanup, log each one's outcome (`interrupted`
   * if it ended cancelled or did not end) and close; later calls are refused. Returns how many ran.
   */
  shutdown(why: string): Promise<number>;
  /** A client session ended: its background processes are stopped (and waited for). Returns how many ran. */
  endSession(session: string): Promise<number>;
  close(): void;
}
