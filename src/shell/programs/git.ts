// git: what runs a program, writes files or reaches the network through git's own options, config
// keys and subcommands. git's parse-options accepts any unique prefix of a long option
// (`--upload-pa=x` is `--upload-pack=x`), and `-c` takes its value attached too (`-ckey=value`).
import { gitConfigWrite } from "./git-config.js";
import { gitCommandKey } from "../../fs/git-config.js";
import type { ParsedArgs, ProgramTable } from "./types.js";

const configValues = (p: ParsedArgs) =>
  [...p.before, ...p.options].filter((o) => o.name === "-c" || (o.name.length >= 5 && "--config".startsWith(o.name)));

/** Subcommands that only read the repository (everything else may write .git or the work tree). */
const READING = new Set([
  "status",
  "log",
  "show",
  "diff",
  "blame",
  "annotate",
  "grep",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "rev-list",
  "describe",
  "shortlog",
  "cat-file",
  "show-ref",
  "for-each-ref",
  "name-rev",
  "merge-base",
  "count-objects",
  "check-ignore",
  "check-attr",
  "diff-tree",
  "diff-files",
  "diff-index",
  "whatchanged",
  "range-diff",
  "cherry",
  "var",
  "version",
  "help",
  "verify-commit",
  "verify-tag",
]);
/** Subcommands that only list when given no operand (`git branch`, `git tag`, `git stash list`). */
const LISTING = new Set(["branch", "tag", "remote", "worktree", "stash", "config", "reflog", "notes", "submodule"]);

export const git: ProgramTable = {
  names: ["git"],
  subcommands: true,
  // `HEAD:.env`, `:0:path`, `stash@{0}:path` name files of the repository: checked as paths.
  paths: (p) =>
    p.operands.flatMap((w) => {
      const m = /^[^:]*:(?:[0-3]:)?(.+)$/.exec(w);
      return m && !w.includes("://") ? [m[1]] : [];
    }),
  grammar: {
    abbrev: true,
    shortValue: "cCmnoOSFeXxu",
    longValue: ["git-dir", "work-tree", "namespace", "super-prefix", "config-env", "exec-path", "message", "output"],
  },
  rules: [
    {
      effect: "exec",
      why: "sets a config key whose value git runs as a command (`-c`)",
      // A write of .git/config that git-config.ts reads exactly is the envelope's to judge, key by key
      // (a key that runs a program is refused there, even when approved, unless the envelope opens it).
      when: (p, argv) =>
        configValues(p).some((o) => gitCommandKey(o.value ?? "") !== undefined) ||
        (p.sub === "config" &&
          gitConfigWrite(p, argv) === undefined &&
          p.operands.some((w) => gitCommandKey(w) !== undefined)),
      match: [
        "git -c core.pager=rm log",
        "git -ccore.pager=rm log",
        "git -c CORE.PAGER=x log",
        "git -c alias.x=!sh x",
        "git -c diff.x.textconv=sh log -p",
        "git -c filter.x.process=sh status",
        "git -c core.sshCommand=x fetch",
        "git -c include.path=/tmp/c log",
        "git clone -c core.hooksPath=h repo",
        "git clone --config=core.fsmonitor=x repo",
        "git config --global core.pager rm",
        "git config set --global core.editor x",
        "git -C sub config core.fsmonitor x",
      ],
      not_match: [
        "git -c user.name=x log",
        "git -c color.ui=never status",
        "git commit -m x",
        "git config core.fsmonitor x",
      ],
    },
    {
      effect: "exec",
      why: "takes configuration from the environment (`--config-env`), which may name a command",
      options: ["--config-env"],
      match: ["git --config-env=core.pager=X log", "git --config-e=a=B log"],
      not_match: ["git log"],
    },
    {
      effect: "exec",
      why: "changes where git finds the programs it runs (`--exec-path=`)",
      when: (p) => p.before.some((o) => o.name.startsWith("--exec-p") && o.value !== undefined),
      match: ["git --exec-path=. status", "git --exec-p=. status"],
      not_match: ["git --exec-path", "git status"],
    },
    {
      effect: "exec",
      why: "runs the program given to `--upload-pack`, `--receive-pack` or `--exec`",
      options: ["--upload-pack", "--receive-pack", "--exec"],
      match: [
        "git fetch --upload-pack=rm origin",
        "git clone --upload-pa=x repo",
        "git push --receive-pack=x origin",
        "git archive --remote=r --exec=x HEAD",
        "git ls-remote --upload-pack x r",
      ],
      not_match: ["git fetch origin", "git push origin main"],
    },
    {
      effect: "exec",
      why: "runs the program given to `clone -u` / `fetch -u`",
      subcommands: ["clone", "fetch", "pull", "ls-remote"],
      options: ["-u"],
      match: ["git clone -u rm repo", "git clone -urm repo"],
      not_match: ["git clone repo", "git add -u"],
    },
    {
      effect: "exec",
      why: "uses a URL of the `ext::` transport, which runs a command",
      when: (p) =>
        [...p.operands, p.sub ?? ""].some((w) => /^ext::/i.test(w)) ||
        p.options.some((o) => /^ext::/i.test(o.value ?? "")),
      match: ["git clone ext::sh repo", "git fetch 'ext::sh -c x' main"],
      not_match: ["git clone https://example.com/r.git"],
    },
    {
      effect: "exec",
      why: "opens the matches in a pager program (`grep -O` / `--open-files-in-pager`)",
      subcommands: ["grep"],
      options: ["-O", "--open-files-in-pager"],
      match: ["git grep -Ovi x", "git grep --open-files-in-pager=vi x", "git grep --open x"],
      not_match: ["git grep -n x"],
    },
    {
      effect: "exec",
      why: "runs the external diff program from config (`--ext-diff`)",
      options: ["--ext-diff"],
      match: ["git diff --ext-diff", "git log -p --ext-d", "git show --ext-diff HEAD"],
      not_match: ["git diff --no-ext-diff", "git diff --stat"],
    },
    {
      effect: "exec",
      why: "runs a command for each commit, submodule or bisect step",
      when: (p) =>
        (p.sub === "rebase" && p.options.some((o) => o.name === "-x" || optionPrefix(o.name, "--exec"))) ||
        (p.sub === "bisect" && p.operands[0] === "run") ||
        (p.sub === "submodule" && p.operands.includes("foreach")) ||
        (p.sub === "difftool" && p.options.some((o) => o.name === "-x" || optionPrefix(o.name, "--extcmd"))),
      match: [
        "git rebase -x rm main",
        "git rebase --exec=rm main",
        "git bisect run rm",
        "git submodule foreach rm",
        "git difftool --extcmd=x",
      ],
      not_match: ["git rebase main", "git bisect start", "git submodule update"],
    },
    {
      effect: "exec",
      why: "runs configured or given programs by design",
      subcommands: [
        "filter-branch",
        "mergetool",
        "difftool",
        "send-email",
        "instaweb",
        "daemon",
        "web--browse",
        "credential",
        "p4",
        "svn",
        "cvsimport",
        "archimport",
        "quiltimport",
      ],
      always: true,
      match: ["git filter-branch --tree-filter x", "git mergetool", "git send-email x.patch"],
      not_match: ["git merge main"],
    },
    {
      effect: "workspace",
      why: "copies hooks from a template folder (`--template`), which then run",
      options: ["--template"],
      match: ["git clone --template=t repo", "git init --templ=t"],
      not_match: ["git init"],
    },
    {
      effect: "write",
      why: "writes its output to a file (`--output`, `-o`)",
      when: (p) =>
        p.options.some((o) => optionPrefix(o.name, "--output") && !o.name.startsWith("--output-")) ||
        (["format-patch", "archive"].includes(p.sub ?? "") &&
          p.options.some((o) => o.name === "-o" || optionPrefix(o.name, "--output-directory"))),
      match: [
        "git log --output=x",
        "git diff --outp=x",
        "git show --output x HEAD",
        "git format-patch -o out HEAD~1",
        "git archive -o a.tar HEAD",
        "git format-patch --output-directory=o HEAD~1",
      ],
      not_match: ["git log -n 5", "git diff --output-indicator-new=+", "git commit -o f"],
    },
    {
      effect: "write",
      why: "changes the repository or the work tree",
      when: (p) =>
        p.sub !== undefined &&
        !READING.has(p.sub) &&
        !(LISTING.has(p.sub) && listsOnly(p)) &&
        !(p.sub === "config" && configReads(p)),
      match: [
        "git commit -m x",
        "git checkout main",
        "git branch new",
        "git config user.name x",
        "git stash",
        "git add .",
      ],
      not_match: [
        "git log -n 5",
        "git status",
        "git branch",
        "git branch -a",
        "git config --get user.name",
        "git stash list",
        "git tag -l",
      ],
    },
    {
      effect: "network",
      why: "talks to a remote",
      subcommands: [
        "fetch",
        "pull",
        "push",
        "clone",
        "ls-remote",
        "remote",
        "submodule",
        "send-email",
        "archive",
        "request-pull",
      ],
      when: (p) =>
        p.sub === "remote"
          ? ["update", "prune", "show", "add"].includes(p.operands[0] ?? "")
          : p.sub !== "archive" || p.options.some((o) => o.name.startsWith("--rem")),
      match: ["git fetch origin", "git push", "git clone https://example.com/r", "git remote update"],
      not_match: ["git log", "git remote -v"],
    },
  ],
};

function optionPrefix(given: string, wanted: string): boolean {
  return given.startsWith("--") && given.length >= 4 && wanted.startsWith(given);
}

/** `git branch`, `git branch -a`, `git tag -l v*`, `git stash list`: listing forms. */
function listsOnly(p: ParsedArgs): boolean {
  const listOpts = [
    "-a",
    "-r",
    "-v",
    "-l",
    "--list",
    "--all",
    "--remotes",
    "-vv",
    "--contains",
    "--merged",
    "--no-merged",
    "--sort",
    "--format",
    "--show-current",
    "--verbose",
    "-n",
  ];
  const onlyListOpts = p.options.every((o) =>
    listOpts.some((l) => o.name === l || (l.startsWith("--") && o.name.startsWith(l))),
  );
  if (p.sub === "stash") return p.operands[0] === "list" || p.operands[0] === "show";
  if (p.sub === "remote") return p.operands.length === 0 || ["-v", "show", "get-url"].includes(p.operands[0]);
  if (p.sub === "worktree" || p.sub === "reflog" || p.sub === "notes" || p.sub === "submodule")
    return ["list", "show", undefined, "status"].includes(p.operands[0]);
  if (p.sub === "tag" && p.options.some((o) => o.name === "-l" || o.name.startsWith("--l"))) return onlyListOpts;
  return p.operands.length === 0 && onlyListOpts;
}

function configReads(p: ParsedArgs): boolean {
  const reading = [
    "--get",
    "--get-all",
    "--get-regexp",
    "--list",
    "-l",
    "--show-origin",
    "--show-scope",
    "--name-only",
    "--null",
    "-z",
  ];
  if (["get", "list"].includes(p.operands[0] ?? "")) return true;
  if (
    p.options.some((o) => reading.some((r) => o.name === r || (r.startsWith("--") && o.name.startsWith(r)))) &&
    p.operands.length <= 2
  )
    return true;
  return p.operands.length === 1 && p.options.length === 0;
}
