// The bubblewrap command line for one contained process (Linux). The order of the mounts matters:
// later ones cover earlier ones. The root filesystem read-only; a fresh /dev, /proc (of the new pid
// namespace: latch's processes and environment are not there) and a private /tmp; /run hidden (daemon
// sockets: docker's is root on the host); the workspace read-only or writable; inside a writable one,
// the masks of masks.ts read-only again; in either, the workspace's own secrets (secrets.ts) masked;
// the control plane and credential stores covered by an empty tmpfs or /dev/null. New user, pid, ipc
// and uts namespaces (and net, unless the network is allowed), every capability dropped, a new
// session (no TIOCSTI on latch's terminal), and death with latch.
import { existsSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { hasEscapedBytes, showName } from "../fs/names.js";
import { isInside } from "../fs/paths.js";
import {
  credentialStores,
  gitFolders,
  gitNamesTooLong,
  HIDDEN_RUNTIME,
  pastPathMax,
  kindOf,
  searchable,
  secretMounts,
  workspaceMasks,
} from "./masks.js";
import { withUsersGitDirs } from "./guard-shared.js";
import { gitView } from "./git-view.js";
import { launcherArgs } from "./init.js";
import { rootOnlyMounts, rootOnlyPaths } from "./root-only.js";
import { scanWorkspace, type MaskKind } from "./secrets.js";
import { bridgePrelude } from "./proxy/bridge.js";
import type { Command, Confinement } from "./types.js";
import { NAMESPACE_ARGS } from "./probe-run.js";
import { realpathOf } from "../fs/realpath.js";

/** Processes (threads count) one contained call may hold at once: a fork bomb stops here. */
export const PIDS_LIMIT = 2048;

/** Where DNS lives when the network is allowed (systemd-resolved's stub, resolvconf). */
const RESOLVER_DIRS = ["/run/systemd/resolve", "/run/resolvconf"];

/**
 * How the program is started inside: latch's init (perl), which sets the pids rlimit itself where the
 * system call's number is known; otherwise a shell first that sets it and, with bash, argv[0].
 */
export interface Launcher {
  shell: string;
  /** bash's `exec -a`: the program sees the argv[0] it would see uncontained. */
  setsArgv0: boolean;
  /** The perl that runs latch's init (init.ts); undefined: the program is exec'd and only its exit code is known. */
  perl?: string;
  /** setrlimit's system call number here: the init sets RLIMIT_NPROC and no shell starts before it (1–2 ms a call). */
  setrlimit?: number;
}

/** setrlimit(2) by `process.arch` (x86_64's own table; arm64's is the generic one). */
const SETRLIMIT: Partial<Record<NodeJS.Architecture, number>> = { x64: 160, arm64: 164 };

export function pickLauncher(): Launcher {
  const perl = ["/usr/bin/perl", "/bin/perl"].find((p) => existsSync(p));
  const shell = existsSync("/bin/bash")
    ? { shell: "/bin/bash", setsArgv0: true }
    : { shell: "/bin/sh", setsArgv0: false };
  return { ...shell, perl, setrlimit: perl && process.platform === "linux" ? SETRLIMIT[process.arch] : undefined };
}

function under(p: string, dir: string): boolean {
  return isInside(dir, p);
}

/** bubblewrap's MAX_ARGS: a longer command line is refused ("Exceeded maximum number of arguments"). */
const BWRAP_MAX_ARGS = 9000;

/** A path a mount cannot name: a name on it is not UTF-8 (Node sends text as UTF-8), or it is too long. */
const unnameable = (p: string): boolean => hasEscapedBytes(p) || pastPathMax(p);

/**
 * Why nothing can start while `p` (under `root`, a path no mount can name) exists, and the fix: for a
 * name that is not UTF-8 a rename, given as a bash command whose `$'…'` quoting holds any name
 * (showName's escapes are bash's; a `'` is escaped too); for a path past PATH_MAX, a move or removal.
 */
function unmountable(root: string, p: string, what: (shown: string) => string): string {
  const rel = path.relative(root, p);
  if (pastPathMax(p))
    return (
      `latch cannot ${what(`\`${showName(rel).slice(0, 120)}…\``)} in the sandbox: its path is longer than a ` +
      `program may name (PATH_MAX, 4,096 bytes). Move that folder higher up or remove it, then run the command again.`
    );
  const parts = rel.split("/");
  const odd = parts.slice(0, parts.findIndex(hasEscapedBytes) + 1).join("/");
  const quoted = showName(odd).replaceAll("'", "\\'");
  return (
    `latch cannot ${what(`\`${showName(rel)}\``)} in the sandbox: a name on its path is not valid UTF-8, and ` +
    `bwrap's mounts take paths as text. Rename that folder to a UTF-8 name (in bash: mv -- $'${quoted}' NEW_NAME), ` +
    `then run the command again.`
  );
}

/** The folders strictly between `root` and each of `paths`, found by a walk that passes no link. */
function above(root: string, paths: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const p of paths) for (let d = path.dirname(p); d !== root && isInside(root, d); d = path.dirname(d)) out.add(d);
  return out;
}

/**
 * The folders strictly between `root` and each of `paths` (and, for a link, where it leads, when that
 * is elsewhere under the root), parents before children. `kinds`: the walk's; what it found without
 * passing a link is its own real path.
 */
function foldersAbove(root: string, paths: readonly string[], kinds: ReadonlyMap<string, MaskKind>): string[] {
  const out = new Set<string>();
  const add = (p: string) => {
    for (let d = path.dirname(p); d !== root && isInside(root, d); d = path.dirname(d)) out.add(d);
  };
  for (const p of paths) {
    add(p);
    const k = kinds.get(p);
    if (k === "dir" || k === "file") continue;
    let real: string | undefined;
    try {
      real = realpathOf(p);
    } catch (err) {
      // Leads nowhere latch can follow (gone, a loop, a folder it may not enter): no folder to keep in
      // place there (secretMounts decides whether the start may go on), and a model's link must not
      // stop every process from starting here.
      if (errnoCode(err) === undefined) throw err;
    }
    if (real !== undefined && real !== p) add(real);
  }
  return [...out].sort();
}

/** `seccomp`: whether the unix socket filter is given on fd 3 (an architecture with a table, no network). */
export function bwrapArgs(cmd: Command, c: Confinement, launcher: Launcher, seccomp = false): string[] {
  const a = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  for (const r of HIDDEN_RUNTIME) {
    // /var/run is usually a link to /run: covering /run covers both.
    if (kindOf(r) === "dir" && !under(c.root, r) && realpathOf(r) === r) a.push("--tmpfs", r);
  }
  if (c.network) for (const d of RESOLVER_DIRS) if (kindOf(d) === "dir") a.push("--ro-bind", d, d);
  // Programs the planner found under /tmp (on latch's PATH, or the one to run), and the folders the
  // confinement names as readable, stay visible, read-only.
  const bins = new Set([path.dirname(cmd.file), ...(cmd.env.PATH ?? "").split(":"), ...(c.readable ?? [])]);
  for (const d of bins) {
    if (path.isAbsolute(d) && under(d, "/tmp") && !under(d, c.root) && kindOf(d) === "dir") a.push("--ro-bind", d, d);
  }
  a.push(c.mode === "workspace-write" ? "--bind" : "--ro-bind", c.root, c.root);
  // Found now, as this process starts (secrets.ts): a secret the process itself makes later is its own.
  const scan = scanWorkspace(c.root, c.denied, "strict");
  // bwrap takes mount paths as text, which Node sends as UTF-8, and the kernel at most PATH_MAX bytes:
  // what must be masked or kept read-only where no mount can name it cannot be, so nothing starts
  // (the message names the folder to rename or move).
  const deep = scan.tooLong[0];
  if (deep !== undefined) throw new Error(unmountable(c.root, deep, (x) => `look for secrets in ${x}`));
  if (scan.unreadable.includes(c.root))
    throw new Error(
      `latch cannot look for secrets in the workspace ${c.root}: it cannot list it (permission denied). ` +
        `Give its owner read and search permission (chmod u+rx), then run the command again.`,
    );
  // What the walk could not look into is masked whole: a process of the same user could open it again.
  const masked = [...scan.secrets, ...scan.denied, ...scan.unreadable];
  const hidden = masked.find(unnameable);
  if (hidden !== undefined)
    throw new Error(
      unmountable(
        c.root,
        hidden,
        (x) => `mask ${x} (a secret, a path the envelope denies, or a folder it cannot read)`,
      ),
    );
  // Once: the binds, the read-only masks and the secrets' masks below must see the same list.
  const folders = withUsersGitDirs(c.root, gitFolders(c.root, scan));
  if (c.mode === "workspace-write") {
    const kept = [...folders, ...scan.gitFiles, ...scan.runsLater].find(unnameable);
    if (kept !== undefined)
      throw new Error(
        unmountable(c.root, kept, (x) => `keep ${x} read-only (git, an editor or a shell runs what it says)`),
      );
    // A git folder latch may not search hides its config and hooks from the masks below, and a process
    // of the same user can chmod it back and write them (review h2: then the guard, which could not
    // look before the call, removed the user's config as new). Nothing starts until it is searchable.
    const shut = folders.find((g) => !searchable(g));
    if (shut !== undefined)
      throw new Error(
        `latch cannot keep the config and hooks of \`${showName(path.relative(c.root, shut) || ".")}\` read-only: ` +
          `it may not look inside that git folder (permission denied). Give its owner read and search ` +
          `permission (chmod u+rx), then run the command again.`,
      );
    // A git folder whose files are past PATH_MAX by name: their masks cannot name them (review g57).
    const deepGit = folders.find(gitNamesTooLong);
    if (deepGit !== undefined)
      throw new Error(
        `latch cannot keep the config and hooks of \`${showName(path.relative(c.root, deepGit)).slice(0, 120)}…\` ` +
          `read-only in the sandbox: that git folder's path leaves fewer than 64 bytes below PATH_MAX (4,096 bytes) ` +
          `for the files in it. Move that repository higher up or remove it, then run the command again.`,
      );
    // A mount point cannot be renamed or removed (EBUSY), and the walk does not enter node_modules or
    // .git. So each folder on the way to a masked path is one (a folder holding a secret renamed into
    // one would hold it unmasked in the next call), each git folder is one (no rename or replacement),
    // and so is each folder above one or above what the masks below keep read-only (review g27: a
    // background process moved the user's nested repository into node_modules, a call's box started
    // meanwhile kept nothing of it read-only, its config got `core.fsmonitor`, and moved back it was the
    // user's own again to the guard, which does not compare a known config). Parents before children:
    // a bind made later over a folder would cover the mounts below it.
    const ruled = [...folders, ...scan.gitFiles, ...scan.runsLater, ...scan.configNamed.map((h) => h.path)];
    const pinned = new Set([...foldersAbove(c.root, masked, scan.maskKinds), ...above(c.root, ruled), ...folders]);
    for (const d of [...pinned].sort()) a.push("--bind", d, d);
    // Then the control files read-only.
    // An approved write of .git/config (call.ts): that one file of the root repository stays writable.
    const config = c.gitConfigWritable ? path.join(c.root, ".git", "config") : undefined;
    for (const m of workspaceMasks(c.root, scan, folders)) if (m !== config) a.push("--ro-bind", m, m);
  }
  // Before the control plane's tmpfs mounts: one of those may hold a secret's mount point. The
  // envelope's denied paths are masked as secrets are; tracked ones are shown to git as zeros that
  // hash to the index's blob (git-view.ts).
  const view = gitView(c.root, { secrets: masked, gitDirs: scan.gitDirs }, cmd.env.PATH);
  const mounts = secretMounts(masked, view.files, {
    root: c.root,
    kinds: scan.maskKinds,
    unreadable: scan.unreadable,
    gitFolders: folders,
  });
  for (const m of [mounts, view.args].flat()) a.push(m);
  const covered: string[] = [];
  for (const h of [...c.hidden, ...credentialStores(c.home)].sort()) {
    // Already invisible (under the private /tmp, or under a folder covered just before), or holding
    // the workspace itself (then the policy keeps it out of arguments, and the mount would hide the workspace).
    if ((under(h, "/tmp") && !under(h, c.root)) || under(c.root, h) || covered.some((d) => under(h, d))) continue;
    const kind = kindOf(h);
    if (kind === "dir") {
      a.push("--tmpfs", h, "--remount-ro", h);
      covered.push(h);
    } else if (kind !== undefined) a.push("--ro-bind", "/dev/null", h);
  }
  // As root, what only root may read (root-only.ts). Last: a folder it covers (/root) may hold a
  // credential store or the state dir masked above, and bwrap cannot make mount points inside it.
  if (c.asRoot) for (const item of rootOnlyMounts(rootOnlyPaths(), c.root)) a.push(item);
  for (const item of NAMESPACE_ARGS) a.push(item);
  if (!c.network) a.push("--unshare-net");
  // The filter on socket(AF_UNIX) (seccomp.ts), read by bwrap from this descriptor (Launch.fd3).
  if (!c.network && seccomp) a.push("--seccomp", "3");
  // Any other path no mount can name (a link's target, a readable folder, the cwd): not sent lossily.
  const odd = a.find(unnameable);
  if (odd !== undefined) throw new Error(unmountable(c.root, odd, (x) => `mount ${x}`));
  a.push("--chdir", cmd.cwd, "--");
  // A proxied network grant: the in-box bridge starts first (proxy/bridge.ts).
  for (const item of launcherArgs(launcher, cmd, PIDS_LIMIT, c.proxy ? bridgePrelude() : "")) a.push(item);
  // bwrap takes at most BWRAP_MAX_ARGS arguments (its MAX_ARGS), and past it says only that: each mask
  // and each folder kept in place above one is three. Said here, with what makes so many.
  if (a.length > BWRAP_MAX_ARGS)
    throw new Error(
      `latch cannot start the sandbox: the workspace has ${scan.secrets.length} secrets, ${scan.denied.length} ` +
        `paths the envelope denies and ${scan.unreadable.length} folders latch cannot read to mask, in ` +
        `${new Set(masked.map((m) => path.dirname(m))).size} folders, and ${folders.length} git folders and ` +
        `${scan.runsLater.length} entries git, an editor or a shell runs later (\`.vscode\`, \`.envrc\` …) below ` +
        `its root to keep read-only, which take ${a.length} of bwrap's ${BWRAP_MAX_ARGS} arguments (a mount ` +
        `each, and in a writable box one for each folder above them). Gather test keys and certificates into ` +
        `fewer folders (or under node_modules or site-packages, which the sandbox does not search), remove the git folders ` +
        `that are no repository of yours (empty \`.git\` folders a command made: \`find . -name .git -type d ` +
        `-empty\`), give unreadable folders back their read and search permission (chmod u+rx) or remove ` +
        `them; or run this command uncontained.`,
    );
  return a;
}
