// How a stdio server latch attaches is started: in the same sandbox as a shell command (sandbox/),
// seeing no workspace unless `workspace = "ro" | "rw"`, no credential store, none of latch's own files,
// no network unless `network = true`, and an environment of the allowlisted basics plus exactly the
// variables its config names, read from latch's start-up environment.
import { accessSync, constants, existsSync } from "node:fs";
import path from "node:path";
import type { McpServerConfig } from "../config/servers.js";
import { readRefs } from "../config/servers.js";
import { sandboxEnvironment } from "../sandbox/masks.js";
import type { Confinement, ProbeResult } from "../sandbox/types.js";
import { MountHolds } from "../sandbox/holds.js";
import { watchGuard } from "../sandbox/guard-watch.js";
import { SpawnedStdio } from "./stdio.js";

type StdioServer = Extract<McpServerConfig, { kind: "stdio" }>;

export interface LaunchPlace {
  /** The canonical workspace the server may be given. */
  workspace: string;
  /** latch's own files (config, state dir, logs): hidden from every server. */
  controlPlane: readonly string[];
  startupEnv: Readonly<NodeJS.ProcessEnv>;
  startupPath: readonly string[];
  probe: ProbeResult;
  /** An empty folder of latch's (removed at close): the box's root for a server given no workspace. */
  emptyRoot: string;
}

/** The variables a server's config names, with their values from latch's start-up environment. */
export function configuredEnv(s: StdioServer, env: Readonly<NodeJS.ProcessEnv>): Record<string, string> {
  return readRefs(s.env, env, `mcp_servers.${s.name}.env`);
}

/** Whether and how the server runs contained: "no sandbox" is an error unless its config says `containment = "off"`. */
function containmentOf(s: StdioServer, probe: ProbeResult): { contained: boolean; why?: string } {
  if (s.containment === "off") return { contained: false, why: "containment = off in its config" };
  if (!probe.available)
    throw new Error(
      `no sandbox works here (${probe.reason}), and an attached server runs only contained. ${probe.fix} Or set \`containment = "off"\` in [mcp_servers.${s.name}] to run it with your full rights`,
    );
  return { contained: true };
}

/** A fresh transport for one start of the server. */
export function stdioTransport(s: StdioServer, place: LaunchPlace, onStderr: (c: Buffer) => void): SpawnedStdio {
  const file = findProgram(s.command, place.startupPath);
  const configured = configuredEnv(s, place.startupEnv);
  const basics = sandboxEnvironment(place.startupEnv);
  const { contained } = containmentOf(s, place.probe);
  if (!contained || !place.probe.available) {
    const env = { ...basics, ...configured };
    return new SpawnedStdio({
      file,
      args: s.args,
      cwd: s.cwd ?? place.workspace,
      env,
      maxMessageBytes: s.maxMessageBytes,
      onStderr,
    });
  }
  // No workspace asked for: the box is rooted in an empty folder of its own, the workspace hidden.
  const root = s.workspace ? place.workspace : place.emptyRoot;
  const hidden = s.workspace ? [...place.controlPlane] : [...place.controlPlane, place.workspace];
  const holds = new MountHolds(root);
  const c: Confinement = {
    holds,
    readable: packageFolders(s.args, s.cwd ?? root),
    root,
    mode: s.workspace === "rw" ? "workspace-write" : "read-only",
    network: s.network,
    hidden,
    home: place.startupEnv.HOME,
    asRoot: process.getuid?.() === 0,
  };
  const launch = place.probe.containment.launch(
    { file, args: s.args, cwd: s.cwd ?? root, env: { ...basics, HOME: "/tmp" } },
    c,
  );
  // The box's own basics (TMPDIR, HOME in its private /tmp), then what the config names: bwrap passes
  // its environment on, so the configured variables reach the server and nothing else does.
  return new SpawnedStdio({
    file: launch.file,
    args: launch.args,
    cwd: launch.cwd,
    env: { ...launch.env, HOME: "/tmp", ...configured },
    ...(launch.fd3 ? { fd3: launch.fd3 } : {}),
    ...(launch.status ? { statusFd: launch.status.fd } : {}),
    maxMessageBytes: s.maxMessageBytes,
    onStderr,
    // Without it each start (and restart) took a new pids cgroup and never gave it back.
    cleanup: () => launch.cleanup(),
    // The watch of a background process's box (sandbox/guard-watch.ts): the root, its git folder and
    // the folders of the box's mount points there; outside them, its timer.
    holds: {
      lost: () => holds.lost(),
      watch: (look) => watchGuard(root, look, undefined, { folders: () => holds.folders(), now: look }),
    },
  });
}

/** An absolute program, or the first match on latch's start-up PATH. */
function findProgram(command: string, dirs: readonly string[]): string {
  if (command.includes("/")) return path.resolve(command);
  for (const d of dirs) {
    const p = path.join(d, command);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  throw new Error(`\`${command}\` is not on latch's PATH; give its absolute path in \`command\``);
}

/**
 * The package folders of the files a server's arguments name (the project holding the node_modules a
 * file is in, else the nearest folder up with a package.json or node_modules), so a server installed under /tmp, which the box replaces with its
 * own, still finds its script and its modules, read-only.
 */
function packageFolders(args: readonly string[], cwd: string): string[] {
  const out = new Set<string>();
  for (const a of args) {
    const file = path.resolve(cwd, a);
    if (!path.isAbsolute(a) && !a.startsWith(".")) continue;
    if (!existsSync(file)) continue;
    // A file in an installed package: the project that holds the node_modules, where its dependencies are.
    const nm = file.indexOf(`${path.sep}node_modules${path.sep}`);
    if (nm > 0) {
      out.add(file.slice(0, nm));
      continue;
    }
    let d = path.dirname(file);
    while (
      d !== path.dirname(d) &&
      !existsSync(path.join(d, "package.json")) &&
      !existsSync(path.join(d, "node_modules"))
    )
      d = path.dirname(d);
    out.add(d === path.dirname(d) ? path.dirname(file) : d);
  }
  return [...out];
}
