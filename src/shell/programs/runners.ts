// Programs that run other programs. The wrappers latch unwraps (env, xargs, timeout, nice, …, see
// ../wrappers.ts) have no capability of their own: their inner commands are planned and carry theirs.
// A shell without -c runs a script file or stdin; the runners latch does not model execute code.
import type { ProgramTable } from "./types.js";

export const WRAPPERS: ProgramTable = {
  names: ["env", "xargs", "nice", "nohup", "timeout", "stdbuf", "setsid", "time", "flock"],
  grammar: { abbrev: true },
  rules: [],
};

export const SHELLS_TABLE: ProgramTable = {
  names: ["sh", "bash", "dash", "zsh", "ash", "ksh", "mksh"],
  grammar: { abbrev: false, stopAtOperand: true, wholeWords: true },
  rules: [
    {
      effect: "workspace",
      why: "runs a script file",
      when: (p) => !p.options.some((o) => /^-[a-z]*c[a-z]*$/.test(o.name)) && p.operands.length > 0,
      match: ["sh script.sh", "bash -e build.sh"],
      not_match: ["sh -c ls", "bash -ec 'ls'"],
    },
    {
      effect: "inline",
      why: "reads commands from standard input",
      when: (p) => !p.options.some((o) => /^-[a-z]*c[a-z]*$/.test(o.name)) && p.operands.length === 0,
      match: ["sh", "bash -s", "sh -i"],
      not_match: ["sh -c ls", "sh x.sh"],
    },
  ],
};

export const RUNNERS: ProgramTable = {
  names: [
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
    "sudo",
    "doas",
    "su",
    "pkexec",
    "run0",
    "runuser",
  ],
  grammar: { abbrev: false },
  base: [{ effect: "exec", why: "runs other commands in a way latch does not check" }],
  rules: [],
};
