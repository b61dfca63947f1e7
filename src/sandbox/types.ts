// What latch asks of an OS sandbox, whatever the platform. A `Containment` turns one process spawn
// into the same spawn inside the sandbox; `probe.ts` picks the one that works here, or none.
import type { Socket } from "node:net";
import type { MountHolds } from "./holds.js";

/** `read-only`: the workspace is mounted read-only. `workspace-write`: writable, minus the masks. */
export type Mode = "read-only" | "workspace-write";

/** `[tools_policies.<toolset>] _containment`. */
export type ContainmentSetting = "auto" | "required" | "off";

/** What the sandbox settings of a toolset say (`_containment`, `_network`). */
export interface ContainmentSettings {
  containment: ContainmentSetting;
  /** `_network = "allow"`: the box shares the host's network (no proxy, no asking). */
  network: boolean;
  /** `_network = "ask"` or `_network_domains`: network through latch's filtering proxy (proxy/). */
  proxied?: ProxiedNetwork;
}

/** local_shell's grants through the proxy: asked per call, pre-granted names, and the test hook. */
export interface ProxiedNetwork {
  /** `_network = "ask"`: a command that wants other names asks a person for them. */
  ask: boolean;
  /** `_network_domains`: names granted to every call without asking (`*.example.org` for the names under it). */
  domains: string[];
  /** `_network_test_hosts`: a test's names mapped to a local server; these alone skip the address rules. */
  testHosts: ReadonlyMap<string, { address: string; port?: number }>;
}

/** One process to start, as runBounded would start it uncontained. */
export interface Command {
  file: string;
  argv0?: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What the sandbox around one process lets it see and do. */
export interface Confinement {
  /** The canonical workspace root. */
  root: string;
  mode: Mode;
  network: boolean;
  /**
   * Folders the program needs to read that may lie under /tmp (the box's /tmp is its own): an attached
   * server's package folder (gateway/launch.ts). Elsewhere they are readable anyway.
   */
  readable?: readonly string[];
  /** Paths that must not be readable: latch's control plane (config, state dir, policy logs). */
  hidden: readonly string[];
  /** The user's home, for the credential stores under it. */
  home?: string;
  /** Envelope globs whose paths in the workspace are masked like secrets (always_deny, deny_paths). */
  denied?: readonly string[];
  /** latch runs as root: what only root may read is covered too (root-only.ts). */
  asRoot?: boolean;
  /** Network granted through latch's filtering proxy (proxy/): the box still has no network of its own. */
  proxy?: { accept(socket: Socket): void };
  /** What the call's boxes hold by mount, noted as each starts (holds.ts); shared by the call's spawns. */
  holds?: MountHolds;
  /** The root repository's `.git/config` stays writable: a step whose config write a person approved (call.ts). */
  gitConfigWritable?: boolean;
}

/** The spawn that runs `Command` contained, and what to undo once every process of it has ended. */
export interface Launch {
  file: string;
  args: string[];
  argv0?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Bytes the sandbox program reads on file descriptor 3 (bwrap's `--seccomp 3`), given through a pipe. */
  fd3?: Buffer;
  /**
   * A descriptor the sandbox's init writes the program's wait status to (init.ts), given as a pipe;
   * `ending` reads it with the sandbox program's own exit code.
   */
  status?: {
    fd: number;
    ending(
      written: string,
      exitCode: number | null,
    ): { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
  };
  /**
   * The spawned process is the sandbox's own (bwrap), and the program runs in sessions of its own under
   * it: SIGTERM goes to those only. bwrap dies of it, and --die-with-parent then SIGKILLs the whole box,
   * so a program's grace (a server flushing its data) never came.
   */
  wrapsProgram?: true;
  /** With a proxied grant: the spawn carries node's IPC channel, on which the bridge hands over connections. */
  accept?: (socket: Socket) => void;
  /** Called once the run is over (every process gone): removes the per-run pids cgroup, if any. */
  cleanup(): Promise<void>;
}

export interface Containment {
  /** The mechanism, for reports: `bubblewrap` on Linux, `seatbelt` on macOS. */
  readonly kind: "bubblewrap" | "seatbelt";
  launch(cmd: Command, c: Confinement): Launch;
}

/** The probe's answer: a working sandbox, or why there is none and how to get one. */
export type ProbeResult =
  { available: true; containment: Containment; detail: string } | { available: false; reason: string; fix: string };
