// One call's containment, from the toolset's settings (`_containment`, `_network`), the start-up probe
// and the mode the decision chose (pipeline: read-only for the envelope's read-only tier, otherwise
// workspace-write). Tools use it to refuse early (`required` without a sandbox), to wrap each spawn,
// and to say in their result what happened.
import { Refusal } from "../errors.js";
import { RUNS_LATER } from "../fs/protected.js";
import { GIT_DIR_READ_ONLY } from "./masks.js";
import { MountHolds } from "./holds.js";
import type { Undone } from "./guard.js";

/** A call's guard (guard.ts): its check, held on by a background process the call starts, ended by each holder. */
export interface CallGuard {
  check(quick?: boolean): Undone[];
  hold(): void;
  end(): void;
}
import type { NetworkReport } from "./proxy/filter.js";
import type { Command, Confinement, Containment, ContainmentSettings, Launch, Mode, ProbeResult } from "./types.js";

export interface CallContainment {
  contained: boolean;
  /** The mode the processes run in; undefined when uncontained. */
  mode?: Mode;
  network: boolean;
  /** Why the processes run uncontained. */
  reason?: string;
  containment?: Containment;
  confinement?: Confinement;
  /** workspace-write: the baseline of what git and editors run later, checked when the call's processes end (guard.ts). */
  guard?: CallGuard;
  /** A network grant through latch's proxy (proxy/): what it let through and what it refused. */
  proxy?: { report(): NetworkReport };
  /**
   * The steps (argv) whose write of `.git/config` a person approved: each runs with the root
   * repository's config writable, every other process of the call without (guard.ts checks the keys).
   */
  gitConfigSteps?: readonly (readonly string[])[];
}

/** Is the toolset contained at all? (for the envelope's tiers: before the mode is known). */
export function isContained(s: ContainmentSettings, probe: ProbeResult): boolean {
  return s.containment !== "off" && probe.available;
}

/** `required` without a working sandbox: the toolset gate refuses the call, naming the fix. */
export function checkRequired(toolset: string, s: ContainmentSettings, probe: ProbeResult): void {
  if (s.containment === "required" && !probe.available)
    throw new Refusal(
      `tools_policies.${toolset}._containment = "required", and no sandbox works here: ${probe.reason}.`,
      `Nothing ran. Ask the user to fix it: ${probe.fix}`,
    );
}

export function callContainment(
  s: ContainmentSettings,
  probe: ProbeResult,
  place: {
    root: string;
    mode?: Mode;
    hidden: readonly string[];
    home?: string;
    denied?: readonly string[];
    /** Approved `.git/config` writes (the steps' argv): writable for those steps only, in workspace-write mode. */
    gitConfigSteps?: readonly (readonly string[])[];
  },
): CallContainment {
  if (s.containment === "off")
    return { contained: false, network: true, reason: "_containment = off: processes run with the user's full rights" };
  if (!probe.available)
    return { contained: false, network: true, reason: `no sandbox works here (${probe.reason}); _containment = auto` };
  const mode = place.mode ?? "workspace-write";
  const steps = mode === "workspace-write" && place.gitConfigSteps?.length ? place.gitConfigSteps : undefined;
  return {
    contained: true,
    mode,
    network: s.network,
    containment: probe.containment,
    ...(steps ? { gitConfigSteps: steps } : {}),
    confinement: {
      root: place.root,
      mode,
      network: s.network,
      hidden: place.hidden,
      home: place.home,
      denied: place.denied ?? [],
      asRoot: process.getuid?.() === 0,
      holds: new MountHolds(place.root),
    },
  };
}

/** How one spawn runs under the call's containment (undefined: as it is). */
export function launchFor(cc: CallContainment, cmd: Command): Launch | undefined {
  if (!cc.contained || !cc.containment || !cc.confinement) return undefined;
  const argv = [cmd.argv0 ?? cmd.file, ...cmd.args];
  const approved = cc.gitConfigSteps?.some((a) => a.length === argv.length && a.every((w, i) => w === argv[i]));
  return cc.containment.launch(cmd, approved ? { ...cc.confinement, gitConfigWritable: true } : cc.confinement);
}

/**
 * What a failed rename or removal in a writable box meets, said where its own error says only
 * "Device or resource busy": the mounts that keep secrets and git folders in place (bwrap.ts).
 */
const KEPT_IN_PLACE_NOTE =
  "In this sandbox each secret (.env, keys, certificates), each path the envelope denies, each git folder, " +
  "and every folder above a secret, a denied path, a git folder or what the sandbox keeps read-only is a mount " +
  'point: renaming or removing one fails ("Device or resource busy", or a cross-device error), so that nothing ' +
  "masked or kept read-only can be moved where the sandbox does not look. Leave those folders where they are, " +
  "or ask the user to move them.";

/**
 * What a write that met "Read-only file system" in a writable box met, said where its own error does
 * not (review g6: a tutorial's `hooks/` and `config` failing unexplained): what runs later outside the
 * box is kept read-only in it (masks.ts), built from the lists the mounts use.
 */
const READ_ONLY_NOTE =
  "In this sandbox the workspace is writable but for what git and other programs run later outside it, " +
  `which is read-only here: in each git folder ${GIT_DIR_READ_ONLY.map((n) => `\`${n}\``).join(", ")}; ` +
  "every `.git` file; the files a repository's config includes and the folder its core.hooksPath names; " +
  "a folder git takes for a repository (HEAD beside objects/ and refs/) is kept as one; and, in the workspace, " +
  `${RUNS_LATER.filter((n) => !n.startsWith(".git/"))
    .map((n) => `\`${n}\``)
    .join(", ")}. ` +
  "Everything outside the workspace is read-only too. Change such a file with the file tools (they ask the user " +
  "first), a repository's config with `git config` (it asks too), or ask the user to run the command outside the sandbox.";

/** The fields every local_shell and run_tool result carries; `out`: the run's, for a failure the box explains. */
export function containmentReport(
  cc: CallContainment,
  out?: { exit_code?: number | null; stdout?: string; stderr?: string },
): Record<string, unknown> {
  if (!cc.contained) return { contained: false, uncontained_reason: cc.reason };
  const proxied = cc.proxy ? { network_domains: cc.proxy.report() } : {};
  const failed = cc.mode === "workspace-write" && typeof out?.exit_code === "number" && out.exit_code !== 0;
  const said = failed ? `${out?.stderr ?? ""}\n${out?.stdout ?? ""}` : "";
  // The errors' own texts (strerror's, as mv and git print them, and Node's), not the codes' names.
  const kept =
    /Device or resource busy|resource busy or locked|Invalid cross-device link|cross-device link not permitted/.test(
      said,
    );
  const readOnly = /read-only file system/i.test(said);
  const notes = [...(kept ? [KEPT_IN_PLACE_NOTE] : []), ...(readOnly ? [READ_ONLY_NOTE] : [])];
  return {
    contained: true,
    mode: cc.mode,
    network: cc.network,
    ...proxied,
    ...(notes.length ? { sandbox_note: notes.join(" ") } : {}),
  };
}
