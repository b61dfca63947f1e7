// Programs that run other programs. The wrappers latch unwraps (env, xargs, timeout, nice, …, see
// ../wrappers.ts) have no capability of their own: their inner commands are planned and carry theirs.
// A shell without -c runs a script file or stdin; the runners latch does not model execute code.
import { AS_OTHER_USER, SHELLS, UNMODELLED_RUNNERS, WRAPPER_NAMES } from "../wrappers.js";
import type { ProgramTable } from "./types.js";

export const WRAPPERS: ProgramTable = {
  // find has a table of its own (find.ts); the shells are SHELLS_TABLE's.
  names: WRAPPER_NAMES.filter((n) => n !== "find" && !SHELLS.has(n)),
  grammar: { abbrev: true },
  rules: [],
};

export const SHELLS_TABLE: ProgramTable = {
  names: [...SHELLS],
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
  names: [...UNMODELLED_RUNNERS, ...AS_OTHER_USER],
  grammar: { abbrev: false },
  base: [{ effect: "exec", why: "runs other commands in a way latch does not check" }],
  rules: [],
};
