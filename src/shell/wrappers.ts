// Programs that run other programs from their arguments. For each, where the inner command starts
// (or the sh script it runs), so the planner can check it as well as the wrapper itself. Where the
// inner program cannot be known from the words, the answer is a refusal. What a program runs through
// its own options (git's config keys, tar's --to-command, sed's `e`) is in programs/.
import { scanOptions, type OptionSpec } from "./options.js";

interface InnerCommand {
  argv: string[];
  /** find -execdir/-okdir: the program runs in each found file's folder. */
  execdir?: boolean;
}

export interface Unwrapped {
  /** The table row that matched, e.g. "env" or "sh -c". */
  wrapper: string;
  inner: InnerCommand[];
  /** sh scripts the wrapper runs (sh -c, flock -c); parsed and planned recursively. */
  scripts: string[];
  /** Set when the call must be refused, with the reason. */
  refuse?: string;
  /** env NAME=VALUE words: they change the inner program's environment. */
  setsEnv?: string[];
}

/** Names of programs that act as other users: always refused under a policy. */
export const AS_OTHER_USER = new Set(["sudo", "doas", "su", "pkexec", "run0", "runuser"]);

/** Programs that run commands in ways latch does not model: refused under a policy. */
export const UNMODELLED_RUNNERS = new Set([
  "watch",
  "strace",
  "ltrace",
  "chroot",
  "unshare",
  "nsenter",
  "script",
  "parallel",
  "ionice",
  "chrt",
  "taskset",
  "busybox",
  "systemd-run",
  "gdb",
  "valgrind",
  "exec",
  "eval",
  "command",
  "builtin",
  "source",
  ".",
  "trap",
]);

export const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ash", "ksh", "mksh"]);

type Rule = (program: string, args: string[]) => Unwrapped;

const refuse = (wrapper: string, reason: string): Unwrapped => ({ wrapper, inner: [], scripts: [], refuse: reason });

/** Options, then the inner command (or none: `env` alone prints the environment). */
function prefixRunner(spec: OptionSpec, opts: { positional?: number; defaultInner?: string[] } = {}): Rule {
  return (program, args) => {
    const scan = scanOptions(program, args, spec);
    if (!scan.ok) return refuse(program, scan.reason);
    const rest = args.slice(scan.index + (opts.positional ?? 0));
    if (scan.index + (opts.positional ?? 0) > args.length)
      return refuse(program, `\`${program}\` is missing its operands`);
    const inner = rest.length > 0 ? rest : opts.defaultInner;
    return { wrapper: program, inner: inner ? [{ argv: inner }] : [], scripts: [] };
  };
}

const envRule: Rule = (program, args) => {
  const spec: OptionSpec = {
    flags: "i0v",
    withValue: "u",
    long: ["ignore-environment", "null", "debug"],
    longWithValue: ["unset"],
    refuse: {
      S: "splits a string into a command line, which latch cannot check word by word",
      "split-string": "splits a string into a command line, which latch cannot check word by word",
      C: "changes the folder the command runs in, outside latch's cwd tracking",
      chdir: "changes the folder the command runs in, outside latch's cwd tracking",
      "block-signal": "changes signal handling, which latch does not model",
      "default-signal": "changes signal handling, which latch does not model",
      "ignore-signal": "changes signal handling, which latch does not model",
      "list-signal-handling": "is not modelled by latch",
    },
  };
  // A lone `-` means -i, and may come first.
  const start = args[0] === "-" ? 1 : 0;
  const scan = scanOptions(program, args.slice(start), spec);
  if (!scan.ok) return refuse("env", scan.reason);
  let i = start + scan.index;
  const setsEnv: string[] = [];
  while (i < args.length && /^[^=]+=/.test(args[i]) && !args[i].startsWith("-")) setsEnv.push(args[i++]);
  const rest = args.slice(i);
  return { wrapper: "env", inner: rest.length ? [{ argv: rest }] : [], scripts: [], setsEnv };
};

const xargsRule = prefixRunner(
  {
    flags: "0rtpxo",
    withValue: "dEILnPs",
    optionalValue: "eil",
    long: ["null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"],
    longWithValue: [
      "delimiter",
      "eof",
      "replace",
      "max-lines",
      "max-args",
      "max-procs",
      "max-chars",
      "process-slot-var",
    ],
    refuse: {
      a: "reads the inner command's arguments from a file, which latch cannot check",
      "arg-file": "reads the inner command's arguments from a file, which latch cannot check",
    },
  },
  { defaultInner: ["echo"] },
);

const niceRule = prefixRunner({ withValue: "n", longWithValue: ["adjustment"], numbers: true });
const nohupRule = prefixRunner({});
const timeoutRule = prefixRunner(
  {
    flags: "v",
    withValue: "sk",
    long: ["preserve-status", "foreground", "verbose"],
    longWithValue: ["signal", "kill-after"],
  },
  { positional: 1 },
);
const stdbufRule = prefixRunner({ withValue: "ioe", longWithValue: ["input", "output", "error"] });
const setsidRule = prefixRunner({ flags: "cfw", long: ["ctty", "fork", "wait"] });
const timeRule = prefixRunner({
  flags: "pavq",
  withValue: "fo",
  long: ["portability", "append", "verbose", "quiet"],
  longWithValue: ["format", "output"],
});

const flockRule: Rule = (program, args) => {
  const scan = scanOptions(program, args, {
    flags: "sexnoFu",
    withValue: "wE",
    long: ["shared", "exclusive", "unlock", "nonblock", "nb", "close", "no-fork", "verbose"],
    longWithValue: ["timeout", "wait", "conflict-exit-code"],
  });
  if (!scan.ok) return refuse("flock", scan.reason);
  const rest = args.slice(scan.index);
  if (rest.length === 0) return refuse("flock", "`flock` is missing the file or descriptor to lock");
  if (rest.length === 1) return { wrapper: "flock", inner: [], scripts: [] }; // flock FD: no command
  const after = rest.slice(1);
  if (after[0] === "-c" || after[0] === "--command") {
    if (after.length !== 2) return refuse("flock", "`flock FILE -c` takes exactly one script");
    return { wrapper: "flock -c", inner: [], scripts: [after[1]] };
  }
  return { wrapper: "flock", inner: [{ argv: after }], scripts: [] };
};

/** sh -c SCRIPT [NAME [ARGS…]]: only option clusters of e, u, x, v, f and c are understood. */
const shellRule: Rule = (program, args) => {
  let sawC = false;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      i++;
      break;
    }
    if (!/^-[a-z]+$/.test(a)) break;
    if (!/^-[euxvfc]+$/.test(a))
      return refuse(`${program} -c`, `\`${program} ${a}\` uses a shell option latch does not model`);
    if (a.includes("c")) sawC = true;
  }
  if (!sawC) {
    return refuse(
      program,
      `\`${program}\` without -c runs a script file or reads commands from standard input, which latch cannot check`,
    );
  }
  if (i >= args.length) return refuse(`${program} -c`, `\`${program} -c\` is missing its script`);
  return { wrapper: `${program} -c`, inner: [], scripts: [args[i]] };
};

const findRule: Rule = (program, args) => {
  const inner: InnerCommand[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!["-exec", "-execdir", "-ok", "-okdir"].includes(a)) continue;
    const end = args.findIndex((w, j) => j > i && (w === ";" || w === "+"));
    if (end === -1) return refuse("find -exec", `\`find ${a}\` has no terminating \`;\` or \`+\``);
    const argv = args.slice(i + 1, end);
    if (argv.length === 0) return refuse("find -exec", `\`find ${a}\` names no program`);
    if (argv[0].includes("{}"))
      return refuse(
        "find -exec",
        `the program of \`find ${a}\` comes from the found file names, so latch cannot know it`,
      );
    inner.push({ argv, execdir: a.endsWith("dir") });
    i = end;
  }
  return { wrapper: "find -exec", inner, scripts: [] };
};

const TABLE: Record<string, Rule> = {
  env: envRule,
  xargs: xargsRule,
  nice: niceRule,
  nohup: nohupRule,
  timeout: timeoutRule,
  stdbuf: stdbufRule,
  setsid: setsidRule,
  time: timeRule,
  flock: flockRule,
  find: findRule,
  ...Object.fromEntries([...SHELLS].map((s) => [s, shellRule])),
};

/** The wrapper rule for a program known by these names (the word run, and its canonical file's). */
export function unwrap(names: readonly string[], args: string[]): Unwrapped | undefined {
  // One row per rule: `sh` that is really `dash` is one shell, not two programs.
  const rows: string[] = [];
  for (const n of new Set(names)) if (TABLE[n] !== undefined && !rows.some((r) => TABLE[r] === TABLE[n])) rows.push(n);
  if (rows.length === 0) return undefined;
  const results = rows.map((n) => TABLE[n](n, args));
  const refused = results.find((r) => r.refuse);
  if (refused) return refused;
  if (results.length > 1)
    return refuse(rows.join("/"), `the program is both \`${rows[0]}\` and \`${rows[1]}\` by name`);
  return results[0];
}

/**
 * Example lines per wrapper, checked when programs/index.ts loads (with the program tables' own
 * examples): the inner command or sh script each must find, or that it must refuse.
 */
export const WRAPPER_EXAMPLES: readonly { line: string; inner?: string; script?: string; refused?: true }[] = [
  { line: "env FOO=1 ls -l", inner: "ls -l" },
  { line: "env -i PATH=/bin git status", inner: "git status" },
  { line: "env -S 'ls -l'", refused: true },
  { line: "env --chdir=/ ls", refused: true },
  { line: "xargs -0 -n 1 rm", inner: "rm" },
  { line: "xargs", inner: "echo" },
  { line: "xargs -a list.txt rm", refused: true },
  { line: "nice -n 5 make", inner: "make" },
  { line: "nohup node server.js", inner: "node server.js" },
  { line: "timeout -s KILL 5 npm test", inner: "npm test" },
  { line: "stdbuf -oL tail -f log", inner: "tail -f log" },
  { line: "setsid -f sleep 1", inner: "sleep 1" },
  { line: "time -p make", inner: "make" },
  { line: "flock lock make", inner: "make" },
  { line: "flock lock -c 'make test'", script: "make test" },
  { line: "sh -c 'ls -l'", script: "ls -l" },
  { line: "bash -e -c 'npm test'", script: "npm test" },
  { line: "bash script.sh", refused: true },
  { line: "bash -i -c ls", refused: true },
  { line: "find . -name '*.o' -exec rm {} ;", inner: "rm {}" },
  { line: "find . -exec {} ;", refused: true },
  { line: "find . -exec rm {}", refused: true },
];

/** The names in the wrapper table, for the README and tests. */
export const WRAPPER_NAMES: readonly string[] = Object.keys(TABLE);
