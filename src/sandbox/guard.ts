// After a workspace-write run: what git, an editor or a shell would run later must be what it was.
// The mounts (bwrap.ts, masks.ts) keep every existing git folder in place and its control files and the
// RUNS_LATER entries read-only, but a contained process can still make what did not exist: a
// `.git/commondir` pointing at a config of its own, `.git/hooks` where there were none, `.envrc`,
// a new repository (`git init sub` with `core.hooksPath`), a `.git` file pointing anywhere. So each
// such call takes a baseline before it runs and, when it ends (and, for a background process, at each
// process_output / process_list call), sets aside what appeared: the new control entries, the new `.git`
// files, and in a new git folder everything that would run code (hooks, commondir, config keys beyond
// a short list: neutralize.ts); a folder the call shut is opened again first (reopen.ts). Set aside is renamed beside itself (`NAME.latch-aside-HEX`), never deleted: while a
// background process runs, what appears may be the user's own (an editor's `.vscode`, their new
// repository's hook), and its new name runs nothing. Each undo is reported in the result and the
// policy log; one that fails is reported as such. A background process runs on while its call is
// checked, so every rename and rewrite here goes through descriptors (remove-beneath.ts), never by a
// path it could turn into a link meanwhile; and a repository made below a name that is not UTF-8
// (secrets.ts walks there too) stops being one (its `HEAD` and its folder set aside): the sandbox
// could not keep it read-only (bwrap.ts refuses to start while one is there).
import { lstatSync, type Stats } from "node:fs";
import path from "node:path";
import { hasEscapedBytes, osPath, showName } from "../fs/names.js";
import { errnoCode } from "../errors.js";
import { RUNS_LATER } from "../fs/protected.js";
import { isInside } from "../fs/paths.js";
import { removeBeneath, SET_ASIDE } from "../fs/remove-beneath.js";
import { realpathOf } from "../fs/realpath.js";
import { checkConfig, configBaseline, type ConfigBaseline } from "./config-guard.js";
import { configKeyRunsProgram } from "../fs/git-config.js";
import { identity, type MountHolds } from "./holds.js";
import { checkHeldLinks, heldLinks, type HeldLinks } from "./held-links.js";
import { GIT_DIR_READ_ONLY, gitFolders, gitNamesTooLong, pastPathMax } from "./masks.js";
import { checkSequencers, sequencerStates, type SequencerState } from "./rebase-guard.js";
import { beyondTheWalk } from "./gitlinks.js";
import { sharedFor, usersGitDirs, usersOwn, withUsersGitDirs, type GuardShared } from "./guard-shared.js";
import { modeText, reopenShut, REOPEN_ROUNDS, setAsideShut, type ShutCheck } from "./reopen.js";
import { belowNotWalked, NOT_WALKED_TEXT } from "./not-walked.js";
import { removeNewLinks } from "./link-guard.js";
import { neutralize } from "./neutralize.js";
import { scanWorkspace, type FolderSeen } from "./secrets.js";

/** One change a contained process made that latch set aside or rewrote (or could not: `what` says so). */
export interface Undone {
  /** Relative to the workspace root. */
  path: string;
  what: string;
}

/**
 * What the model is told beside what was undone, so it does not make it again or report a success it
 * lost: a `git worktree add` exits 0 and its `.git/worktrees` entry is gone (review g6).
 */
export function undoneNote(undone: readonly Undone[]): string {
  const gitMakes = undone.some((u) => /(^|\/)\.git\/(worktrees|modules)(\/|$)|(^|\/)\.git$/.test(u.path));
  return (
    "latch undid these (renamed them aside, or rewrote a new repository's config) because they would run, or point git elsewhere, outside the sandbox later (at the user's next git command, in an editor or a shell). " +
    (gitMakes
      ? "`git worktree add` and `git submodule add`/`update` need such entries and cannot keep them in the sandbox, whatever their exit code said: ask the user to run them."
      : "If the user wants them, ask the user to make them; do not make them again (a background process that keeps making one is stopped).")
  );
}

/** Said of program keys put back after a box's hold on `.git/config` was lost (holds.ts). */
const LOST_CONFIG =
  "keys that run programs, changed after a rename outside the sandbox took its read-only hold on this file off (git's own config.lock, an editor's save)";

/**
 * Where a git folder's config is read and put back, relative to `root`: the file itself, or the file
 * in the workspace its link leads to (where the box's mount sits); undefined for a link out of it.
 */
function configAt(root: string, config: string): { dir: string; name: string } | undefined {
  let real = config;
  try {
    if (lstatSync(osPath(config)).isSymbolicLink()) real = realpathOf(config);
  } catch {
    // not there, or leading nowhere: read as no file
  }
  if (!isInside(root, real) || real === root) return undefined;
  return { dir: path.relative(root, path.dirname(real)) || ".", name: path.basename(real) };
}

/** The identity of what is at `p`, or undefined. */
function idOf(p: string): string | undefined {
  const st = stat(p);
  return st && id(st);
}

function stat(p: string): Stats | undefined {
  try {
    return lstatSync(osPath(p));
  } catch {
    return undefined;
  }
}

const id = (st: Stats) => `${st.dev}:${st.ino}`;

interface Baseline {
  /** Each git folder (by identity: a renamed parent keeps it) and the control entries it had. */
  gitDirs: Map<string, Set<string>>;
  /** The `.git` files, by identity. */
  gitFiles: Set<string>;
  /** RUNS_LATER entries present under the root. */
  runsLater: Set<string>;
  /**
   * What a removal must leave, by identity, with what it is: the git folders, `.git` files and secrets
   * there before the call (a contained process can rename a folder holding a repository to a new
   * `.vscode`; the folders above a secret are mount points, bwrap.ts, so secrets are a backstop).
   */
  kept: Map<string, string>;
  /**
   * RUNS_LATER-named entries in subfolders (a `sub/.envrc` runs when the user enters `sub`), absolute,
   * with the identity of the folder each was in; and every one's own identity.
   */
  nested: Map<string, string | undefined>;
  nestedIds: Set<string>;
  /**
   * What the baseline could not look at (EACCES: a folder shut, perhaps by a background process's
   * chmod): the walk's unreadable folders, and the git folders and `.git` files a stat could not see.
   * What is found there afterwards is not judged new: the box masked those folders whole (read-only),
   * so the call did not make it, and the user's `.git` file or repository was taken for the model's
   * and removed (2026-12-06). Another call's process that did is judged by that call's own baseline.
   */
  unseen: string[];
  /** Which of GIT_DIR_MARKS each folder held (secrets.ts): what a call added, when it made one a git directory. */
  marks: ReadonlyMap<string, readonly string[]>;
  /** What repositories' configs named that runs later (hooks folders, included files), by identity. */
  named: Set<string>;
  /** Every folder the walk listed, with its inode: a folder made a git directory was there, or is new. */
  folders: ReadonlyMap<string, FolderSeen>;
  /** What each git folder's stopped rebase or cherry-pick would run, by identity (rebase-guard.ts). */
  rebases: ReadonlyMap<string, SequencerState>;
  /**
   * Each git folder's config as it was (config-guard.ts), by the config's path (the mount point): its
   * program keys, if a box lost its hold on it. A linked config is read where it leads, in the workspace.
   */
  configs: Map<string, ConfigBaseline>;
  /** The held control files that are links (held-links.ts). */
  links: HeldLinks;
  /** Every link in the walked folders, as `PATH\0TARGET` (secrets.ts): which are new (link-guard.ts). */
  wsLinks: ReadonlySet<string>;
}

/**
 * The git folders (submodules' and those under other names too) and `.git` files of the workspace now,
 * the root's and every nested one, and the RUNS_LATER entries in subfolders: one walk, the sandbox's
 * cached one (one lstat per unchanged folder), so watching the whole tree costs a run no walk of its own.
 */
function repositories(root: string) {
  const scan = scanWorkspace(root, [], "lenient");
  const own = path.join(root, ".git");
  return {
    // A folder shut meanwhile is listed, not thrown: the run's result stays.
    dirs: withUsersGitDirs(root, gitFolders(root, scan, false)),
    files: [...(stat(own)?.isFile() ? [own] : []), ...scan.gitFiles],
    nested: scan.runsLater,
    secrets: scan.secrets,
    unreadable: scan.unreadable,
    bare: scan.bareDirs,
    marks: scan.gitMarks,
    folders: scan.folders,
    errors: scan.gitlinkErrors,
    named: scan.configNamed,
    links: scan.links,
    linksUnfollowed: scan.linksUnfollowed,
  };
}

/**
 * What a check gives back before it judges: the folders the walk could not read, and the git folders
 * (which the walk lists and never enters) whose owner may not read or search them. git needs only
 * search permission to run a config there, which latch, through descriptors, could not open to
 * rewrite (review g45: `chmod 100 evil/.git` left a new repository's core.fsmonitor armed). One the
 * baseline saw so is the user's own chmod: unseen, not given back.
 */
function shutNow(root: string, repos: ReturnType<typeof repositories>): string[] {
  const gitDirs = repos.dirs.filter((g) => {
    const st = isInside(root, g) ? stat(g) : undefined;
    return st !== undefined && st.isDirectory() && (st.mode & 0o500) !== 0o500;
  });
  // Once each: a git folder the walk could not read is both (review g47: set aside, then said `NOT undone`).
  return gitDirs.length === 0 ? repos.unreadable : [...new Set([...repos.unreadable, ...gitDirs])];
}

/**
 * repositories(), without the walk: the root's git folder or `.git` file, the repositories its index's
 * gitlinks lead to (a new `sub/` repository gitlinked there is entered by the user's `git status` at
 * the root: review g11), and what their configs name (gitlinks.ts reads indexes, kept while unchanged).
 */
function rootOnly(root: string): ReturnType<typeof repositories> {
  const own = path.join(root, ".git");
  const kind = stat(own);
  const beyond = beyondTheWalk(root, [], [], false);
  return {
    dirs: [...(kind?.isDirectory() ? [own] : []), ...beyond.dirs],
    files: [...(kind?.isFile() ? [own] : []), ...beyond.files],
    nested: [],
    secrets: [],
    unreadable: [],
    bare: [],
    marks: new Map(),
    folders: new Map(),
    errors: beyond.errors,
    named: beyond.named,
    links: new Set<string>(),
    linksUnfollowed: [],
  };
}

/**
 * The names under `dir` that may be there: seen, or not looked at (a stat that met EACCES, a folder on
 * the way shut by a chmod). Only a name seen absent is taken for one a call can have made: a look that
 * could not see was taken for absence, and the user's config, hooks and info were removed as new
 * under a background process's mode flips (2026-12-06).
 */
function present(dir: string, names: readonly string[]): Set<string> {
  return new Set(
    names.filter((n) => {
      try {
        lstatSync(osPath(path.join(dir, n)));
        return true;
      } catch (err) {
        return !["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "");
      }
    }),
  );
}

export class ControlGuard {
  /** The lost configs' checks (their `fine` kept from one check to the next: config-guard.ts). */
  private readonly lostConfigs = new Map<string, ConfigBaseline>();

  /** Its call's check, and a background process's, each hold it; the last end lets the shared state go. */
  private holdCount = 1;

  private constructor(
    readonly root: string,
    private readonly base: Baseline,
    /** A call with an approved `.git/config` write: the file's bytes before, and the keys approved (config-guard.ts). */
    private readonly config: ConfigBaseline | undefined,
    /** What the live guards of the root share (guard-shared.ts). */
    private readonly shared: GuardShared<Baseline>,
    /** What the call's boxes hold by mount (holds.ts): `.git/config` among the lost, its program keys are checked. */
    private readonly holds: MountHolds | undefined,
  ) {}

  /** A background process keeps checking with this guard after its call's check: held till it ends. */
  hold(): void {
    this.holdCount++;
  }

  /** One holder is done; the last lets the root's shared state go (guard-shared.ts). Once per hold. */
  end(): void {
    if (this.holdCount <= 0) return;
    if (--this.holdCount === 0) this.shared.end(this.config !== undefined);
  }

  /**
   * The baseline of the canonical workspace `root`, now (before the call's processes start). `configKeys`:
   * the keys of the `.git/config` writes a person approved for this call (the file is writable then).
   * A Refusal: such a write while another contained process of the root runs, or this beside one.
   */
  static start(root: string, configKeys?: readonly string[], holds?: MountHolds): ControlGuard {
    // While another guard of the root is live, its process may have made what a look now would see:
    // the first guard's baseline, taken when none ran, is this one's too, blind spots and all (review
    // g19: a later look's own blind spot hid a repository the process made there).
    const shared = sharedFor<Baseline>(root);
    const first = shared.enter(configKeys !== undefined);
    try {
      const base = first ?? ControlGuard.look(root);
      if (first === undefined) shared.settle(base);
      const config = configKeys ? configBaseline(root, configKeys) : undefined;
      return new ControlGuard(root, base, config, shared, holds);
    } catch (err) {
      shared.end(configKeys !== undefined);
      throw err;
    }
  }

  private static look(root: string): Baseline {
    // Below an entry the guard set aside (or a folder named like one), only what this process saw as
    // the user's elsewhere before is the user's to a later call: the rest was made or moved in by a
    // contained process, and the walk that set it aside may not have seen all of it (review g25: a
    // chain behind `.claude/.credentials.json`, a secret the walk does not enter, one level more a
    // round past the rounds' cap). Taken as new, it is judged again at the call's end. The user's own
    // repository the box moved there stays theirs (review g26: its hook and keys were dropped).
    const found = repositories(root);
    const known = usersOwn(root);
    const ours = (p: string) => {
      // By dev:ino and birth time: a new entry at a freed inode number is not the one seen.
      const k = identity(p);
      if (!belowAside(root, p)) {
        if (k) known.add(k);
        return true;
      }
      return k !== "" && known.has(k);
    };
    const plain = (p: string) => !belowAside(root, p);
    const repos = {
      ...found,
      dirs: found.dirs.filter(ours),
      files: found.files.filter(ours),
      nested: found.nested.filter(ours),
      named: found.named.filter((h) => ours(h.path)),
      // A folder below one is no folder of the user's a repository could be "unmade" from (review g26:
      // a bare repository there, moved out under a plain name, kept its config as the model wrote it).
      folders: new Map([...found.folders].filter(([p]) => plain(p))),
      marks: new Map([...found.marks].filter(([p]) => plain(p))),
    };
    const unseen = [...repos.unreadable];
    /** lstat, with a look that could not see (not ENOENT/ENOTDIR) kept in `unseen`. */
    const look = (p: string): Stats | undefined => {
      try {
        return lstatSync(osPath(p));
      } catch (err) {
        if (!["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) unseen.push(p);
        return undefined;
      }
    };
    const gitDirs = new Map<string, Set<string>>();
    const byId = new Map<string, string>();
    const usersDirs = usersGitDirs(root);
    for (const g of repos.dirs) {
      const k = isInside(root, g) ? identity(g, true) : "";
      if (k !== "") usersDirs.set(g, k);
      const st = look(g);
      // One its owner may not read or search hides what it holds from this baseline, as a folder the
      // walk could not read does: not given back by the check (the user's own chmod), and nothing
      // below it taken for new (a submodule's git folder in `.git/modules` would be neutralized).
      if (st?.isDirectory() && (st.mode & 0o500) !== 0o500) unseen.push(g);
      if (st) gitDirs.set(id(st), present(g, GIT_DIR_READ_ONLY));
      if (st) byId.set(id(st), g);
    }
    const gitFiles = new Set(repos.files.flatMap((f) => [look(f)].flatMap((st) => (st ? [id(st)] : []))));
    const kept = new Map<string, string>();
    const before = (p: string, what: string) => {
      const st = look(p);
      if (st) kept.set(id(st), `${what} \`${showName(path.relative(root, p))}\` that was there before the call`);
    };
    for (const g of repos.dirs) before(g, "the git folder");
    for (const f of repos.files) before(f, "the `.git` file");
    for (const s of repos.secrets) before(s, "the secret");
    const runsLater = present(root, RUNS_LATER);
    const base = {
      gitDirs,
      gitFiles,
      kept,
      runsLater,
      nested: new Map(repos.nested.map((p) => [p, idOf(path.dirname(p))])),
      nestedIds: new Set(repos.nested.flatMap((p) => [look(p)].flatMap((st) => (st ? [id(st)] : [])))),
      unseen,
      marks: repos.marks,
      folders: repos.folders,
      named: new Set(repos.named.flatMap((h) => [look(h.path)].flatMap((st) => (st ? [id(st)] : [])))),
      rebases: sequencerStates(root, byId),
      wsLinks: found.links,
      links: heldLinks(
        root,
        repos.dirs.filter((g) => isInside(root, g)),
        repos.nested,
      ),
      // `config.worktree` too (review g22: `git config --worktree` replaced it, and a loop wrote on).
      configs: new Map(
        repos.dirs
          .filter((g) => isInside(root, g))
          .flatMap((g) => ["config", "config.worktree"].map((n) => path.join(g, n)))
          .flatMap((c) => {
            const at = configAt(root, c);
            if (!at) return [];
            try {
              return [[c, configBaseline(root, [], at.dir, at.name)] as const];
            } catch (err) {
              // Shut (a chmod): git, as the user, cannot read it either while so; and a throw here
              // took every later call's baseline, which ran unguarded (review g44).
              if (errnoCode(err) === "EACCES") return [];
              throw err;
            }
          }),
      ),
    };
    return base;
  }

  /**
   * Set aside what appeared since the baseline; say what was, or what could not be. `quick`: only
   * what the root itself holds (its runs-later names, its git folder, what its configs name), without
   * the walk: a watch event's check, which a tree made slow to walk must not delay (review g10: a
   * folder of 300,000 files kept a re-made include there for seconds).
   */
  check(quick = false): Undone[] {
    const out: Undone[] = [];
    const rel = (p: string) => showName(path.relative(this.root, p) || ".");
    // Set aside, never deleted: the entry may be the user's own, made outside while a background
    // process ran (an editor's `.vscode`, a new repository's hook: review g20), or hold what the box
    // moved into it (review g24: the user's `sub/` moved into a new `.git`). Its name no longer runs.
    let asides = 0;
    const remove = (p: string, what: string) => {
      try {
        const r = removeBeneath(this.root, p, (st) => this.base.kept.get(id(st)), { aside: true });
        if (r.done === "aside") asides++;
        const note =
          r.done !== "aside"
            ? `gone when latch came to undo it (moved meanwhile?); ${what}`
            : r.holds
              ? `renamed to \`${showName(r.name)}\`, not removed: it holds ${r.holds}; ${what}`
              : `renamed to \`${showName(r.name)}\` (set aside, not deleted: its name no longer runs); ${what}`;
        const opened =
          r.done === "aside" && r.opened !== undefined
            ? `; its folder, mode ${modeText(r.opened)} (made so during the call?), given its owner's read, write and search permission for it`
            : "";
        out.push({ path: rel(p), what: note + opened });
      } catch (err) {
        out.push({ path: rel(p), what: `NOT undone (${(err as Error).message}): ${what}` });
      }
    };
    for (const name of RUNS_LATER) {
      if (name.startsWith(".git/")) continue; // the git folders' own check below
      const p = path.join(this.root, name);
      if (!this.base.runsLater.has(name) && stat(p)) remove(p, "made by a contained process; runs later");
    }
    for (const item of checkHeldLinks(this.root, this.base.links)) out.push(item);
    if (this.config) for (const item of checkConfig(this.config, rel)) out.push(item);
    // A box's read-only hold on a git folder's config taken off by a rename outside (holds.ts): what the
    // process could write from then on is unknown, so the keys that run programs are put back as they
    // were before any contained process ran (the approved ones kept); plain keys (user.name) stay.
    const lost = this.holds?.lost() ?? [];
    for (const [config, was] of this.base.configs) {
      if (!lost.includes(config)) continue;
      // The approved keys are the root's config's alone (`allowed`, as checkConfig reads it); of the
      // rest, a key removed runs nothing, one set runs what it names when git reads it as a program.
      const allowed = config === path.join(this.root, ".git", "config") ? (this.config?.allowed ?? []) : [];
      const keep = (k: string, values: readonly string[]) => values.every((v) => !configKeyRunsProgram(k, v));
      let b = this.lostConfigs.get(config);
      if (!b) this.lostConfigs.set(config, (b = { ...was, allowed, keep, beyond: LOST_CONFIG }));
      for (const item of checkConfig(b, rel)) out.push(item);
    }
    const unseen = (p: string) => this.base.unseen.some((u) => p === u || p.startsWith(u + path.sep));
    const now = new Map<string, string>();
    // What is set aside keeps what it holds, which this walk listed at its old place: a repository in a
    // new `sub/.vscode` would stay as the model made it, and be the user's to the next call's baseline
    // (review g23: renamed back to `tools`, its fsmonitor ran at the user's git status). So the walk is
    // made again while a round sets something aside, three rounds at most; what a deeper chain keeps
    // past them is below an aside, which no later baseline takes for the user's (look()).
    for (let round = 1; ; round++) {
      const before = asides;
      now.clear();
      let repos = quick ? rootOnly(this.root) : repositories(this.root);
      // Folders inside a folder given back are read a walk later (review g32: `src` and `src/a` both
      // 0111); past REOPEN_ROUNDS, what is still shut is shut from git too.
      const walked = (p: string) => !belowNotWalked(this.root, p);
      const shut: ShutCheck = { root: this.root, unseen, walked, rel, out };
      for (let k = 0; round === 1 && k < REOPEN_ROUNDS && reopenShut(shut, shutNow(this.root, repos)); k++)
        repos = repositories(this.root);
      // A git folder the last round's walk found shut too (review g46: one below 16 shut folders). The
      // user's own, by identity (the walk lists a git folder, never its folder entry), stays.
      if (round === 1)
        setAsideShut(
          shut,
          shutNow(this.root, repos),
          (d, st) => sameFolder(this.base.folders.get(d), st) || this.base.gitDirs.has(id(st)),
        );
      // Links the call made that latch could not follow (link-guard.ts); walked again without them.
      const links = removeNewLinks(this.root, this.base.wsLinks, repos.linksUnfollowed, rel);
      for (const item of links.out) out.push(item);
      if (links.removed > 0) repos = repositories(this.root);
      this.walkCheck(repos, round === 1, unseen, now, remove, rel, out);
      if (asides === before || round === 3) break;
    }
    // A rebase or cherry-pick left stopped runs its exec lines and strategy at the user's `--continue`.
    for (const item of checkSequencers(this.root, now, this.base.rebases, rel)) out.push(item);
    return out;
  }

  /** One round of check(): what the walk `repos` found, judged against the baseline. */
  private walkCheck(
    repos: ReturnType<typeof repositories>,
    first: boolean,
    unseen: (p: string) => boolean,
    now: Map<string, string>,
    remove: (p: string, what: string) => void,
    rel: (p: string) => string,
    out: Undone[],
  ): void {
    if (first) for (const e of repos.errors) out.push({ path: ".", what: `NOT checked (${e})` });
    // A new repository where the baseline's walk did not go was perhaps the user's, newly gitlinked by
    // the call (review g59): neutralized all the same (git now enters it), and said so, not as made.
    const whose = (g: string) =>
      belowNotWalked(this.root, g)
        ? `a repository below ${NOT_WALKED_TEXT}, which latch had not looked at before the call`
        : "a repository made during the call";
    // Set aside last, deepest first: each is where this walk saw it until then. A new repository is
    // neutralized where it is first (in a new `sub/.vscode` too), and what is deeper in an entry set
    // aside is judged before the entry moves (review g23: `sub/.vscode/.git`, `src/objects/.git`;
    // g24: a chain of repositories each in the one before's hooks, neutralized one level a round).
    const later: [p: string, what: string][] = [];
    const setAside = (p: string, what: string) => void later.push([p, what]);
    // Below the root the mounts do not cover these names: one made during the call is set aside.
    // The user's: one seen before (by identity: the box may have moved its folder, review g21), or one
    // in the very folder it was in (an editor's save outside replaces it). Not one at a known name in a
    // folder made since (the box moved the user's folder away and made its own in its place).
    for (const p of repos.nested) {
      const st = stat(p);
      if (!st || unseen(p) || this.base.nestedIds.has(id(st))) continue;
      if (this.base.nested.has(p) && idOf(path.dirname(p)) === this.base.nested.get(p)) continue;
      setAside(p, "made by a contained process in a subfolder; runs later");
    }
    for (const f of repos.files) {
      // Past PATH_MAX no stat names it, and git reads it from its folder (review g58). A start refuses
      // one it sees (bwrap.ts): one here is new, or below node_modules, where the start did not look.
      if (pastPathMax(f)) {
        if (!unseen(f)) setAside(f, "a `.git` file too deep for latch to read (past PATH_MAX), which git follows");
        continue;
      }
      const st = stat(f);
      if (st && !this.base.gitFiles.has(id(st)) && !unseen(f))
        setAside(f, "a new `.git` file (it points git elsewhere)");
    }
    // What a repository that was there names in its config (read-only in the box): a hooks folder
    // (`core.hooksPath = .githooks`: its hooks run at the user's next commit, review g5) or an included
    // file (its keys are the config's, review g6), made during the call. One that was there is the
    // user's (read-only in the box too); one a new repository's config names goes with that config.
    for (const h of repos.named) {
      const g = stat(h.gitDir);
      const st = stat(h.path);
      // A git folder outside the workspace (the root a linked worktree) is read-only in the box: the user's.
      const theUsers = !isInside(this.root, h.gitDir) || (g !== undefined && this.base.gitDirs.has(id(g)));
      if (!g || !st || !theUsers || unseen(h.path) || this.base.named.has(id(st))) continue;
      setAside(h.path, "made during the call where a repository's config names what runs later");
    }
    // A folder that was there made a git directory under another name (HEAD, objects/, refs/ in `src`,
    // or in the root with its `.git` spoilt: git's discovery then takes the folder itself) is unmade:
    // what the call added of those names is set aside (review g1). Neutralized as a new repository is,
    // it would lose the user's own files under git's names (a `config`, a `hooks/` of source code). A
    // new folder (`git init --bare remote.git`) is a new repository, neutralized below.
    const unmade = new Set<string>();
    let wasAt: Map<number, string> | undefined; // each folder's path before the call, by inode (a rename keeps it)
    for (const b of repos.bare) {
      const st = stat(b);
      if (!st || this.base.gitDirs.has(id(st)) || unseen(b)) continue;
      wasAt ??= new Map([...this.base.folders].map(([p, f]) => [f.ino, p]));
      const before = wasAt.get(st.ino);
      // A folder that was empty (`git clone --bare . backup` into one made before) holds nothing of the
      // user's: a new repository, neutralized below (review g2: unmade, its history was removed).
      // One made again at a freed inode number is new too.
      if (before === undefined || !this.wasThere(before, st)) continue;
      unmade.add(b);
      const had = this.base.marks.get(before) ?? [];
      for (const m of repos.marks.get(b) ?? [])
        if (!had.includes(m))
          setAside(
            path.join(b, m),
            `made \`${rel(b)}\` a git directory during the call (git would run what its config says)`,
          );
    }
    for (const g of repos.dirs) {
      if (unmade.has(g)) continue;
      if (pastPathMax(g)) {
        if (!unseen(g)) setAside(g, `${whose(g)} too deep for latch to name (past PATH_MAX)`);
        continue;
      }
      const st = stat(g);
      if (!st) continue;
      const had = this.base.gitDirs.get(id(st));
      // One the baseline could not look into is the user's own chmod; the box did not start (review
      // g46: its rebase state, which latch may not open either, was said `NOT undone`).
      if (unseen(g)) continue;
      now.set(id(st), g);
      if (had === undefined) {
        // A folder of the walk's that was there with something in it (the user's `src/`), listed now
        // because a `.git` file made during the call names it: neutralized, its `config/` and
        // `hooks/` of source code were set aside (review g29). That `.git` file is set aside above,
        // and one that made the folder a git directory is unmade above: what it held stays. Not a
        // folder named `.git`, which git finds by its name (and an inode number can be one freed).
        if (path.basename(g) !== ".git" && this.wasThere(g, st)) continue;
        neutralize(this.root, g, rel, setAside, out, whose(g));
        // Below a name that is not UTF-8 the sandbox could not keep it read-only (no mount takes the
        // path): it stops being a repository, its HEAD and its folder set aside (nothing deleted:
        // review g24 moved the user's `sub/` into such a `.git`, and its removal took their files).
        // One whose files are past PATH_MAX by name (git reads them relative to it) so too (review g57).
        if (hasEscapedBytes(g) || gitNamesTooLong(g)) {
          const why = hasEscapedBytes(g)
            ? `${whose(g)} below a name that is not UTF-8 (the sandbox cannot keep it read-only)`
            : `${whose(g)} too deep for latch to name its files (within 64 bytes of PATH_MAX)`;
          if (stat(path.join(g, "HEAD"))) setAside(path.join(g, "HEAD"), why);
          setAside(g, why);
        }
        continue;
      }
      for (const name of GIT_DIR_READ_ONLY) {
        const p = path.join(g, name);
        if (!had.has(name) && stat(p)) setAside(p, "a git control entry made by a contained process");
      }
    }
    const depth = (p: string) => p.split(path.sep).length;
    for (const [p, what] of later.sort((a, b) => depth(b[0]) - depth(a[0]))) remove(p, what);
  }

  /**
   * Was the folder `g` (stat `st`) among the walk's before the call, there, with something in it? By
   * its path and inode: one moved in (into a new repository's `.git/modules`, review g31) is new where
   * it is now. An empty one holds nothing of the user's, as for `repos.bare`.
   */
  private wasThere(g: string, st: Stats): boolean {
    const f = this.base.folders.get(g);
    return sameFolder(f, st) && f.entries > 0;
  }
}

/**
 * Whether the folder `st` is the one the walk saw: its inode and birth time (review g47: `rm -rf u;
 * mkdir u` got the same inode back, and a shut folder the model made was taken for the user's).
 */
function sameFolder(f: FolderSeen | undefined, st: Stats): f is FolderSeen {
  return f !== undefined && f.ino === st.ino && f.birthtimeMs === st.birthtimeMs;
}

/** Whether a name on `p`'s way below `root` is one the guard set aside (`NAME.latch-aside-HEX`). */
function belowAside(root: string, p: string): boolean {
  return path
    .relative(root, p)
    .split(path.sep)
    .some((n) => SET_ASIDE.test(n));
}
