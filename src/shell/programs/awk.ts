// awk: the program text decides. `system()`, `| getline` and `print | "cmd"` run shell commands;
// `print > "file"` writes one. A program from `-f FILE` cannot be seen: workspace code.
import type { ParsedArgs, ProgramTable } from "./types.js";

/** The awk program of a command line: the first operand, unless -f names a file (then none is seen). */
function program(p: ParsedArgs): string | undefined {
  if (p.options.some((o) => o.name === "-f" || o.name.startsWith("--fi"))) return undefined;
  return p.options.find((o) => o.name === "-e" || o.name.startsWith("--so"))?.value ?? p.operands[0];
}

const RUNS = /\bsystem\s*\(|\|\s*&?\s*getline|\b(print|printf)\b[^;{}]*\|/;
const WRITES = /\b(print|printf)\b[^;{}]*>/;

export const awk: ProgramTable = {
  paths: (p) => [...(program(p) ?? "").matchAll(/>>?\s*"([^"]+)"/g)].map((m) => m[1]),
  notPaths: (p) => {
    const prog = program(p);
    return prog === undefined ? [] : [prog];
  },
  names: ["awk", "gawk", "mawk", "nawk", "busybox-awk"],
  grammar: {
    abbrev: true,
    shortValue: "fvFeliE",
    longValue: ["file", "assign", "field-separator", "source", "load", "include", "exec"],
  },
  rules: [
    {
      effect: "exec",
      why: "its program runs shell commands (`system()`, pipes to or from a command)",
      when: (p) => RUNS.test(program(p) ?? ""),
      match: [
        "awk 'BEGIN{system(\"id\")}'",
        "awk '{print | \"sh\"}' f",
        "awk 'BEGIN{\"id\" | getline x}'",
        "gawk '{print |& \"sh\"}' f",
      ],
      not_match: ["awk '{print $1}' f", "awk -F: '{print $1}' /etc/passwd", "awk '/a|b/ {n++} END {print n}' f"],
    },
    {
      effect: "exec",
      why: "loads an extension or another program (`-l`, `-E`, `--load`, `--exec`, `-i`, `@load`)",
      when: (p) =>
        p.options.some(
          (o) =>
            ["-l", "-E", "-i"].includes(o.name) ||
            ["--load", "--exec", "--include"].some((l) => o.name.length >= 4 && l.startsWith(o.name)),
        ) || /@(load|include)\b/.test(program(p) ?? ""),
      match: ["gawk -l ext '{print}' f", "awk '@load \"x\"' f", "gawk --load=x 1 f"],
      not_match: ["awk '{print}' f"],
    },
    {
      effect: "workspace",
      why: "reads its program from a file (`-f`), which latch does not read",
      options: ["-f", "--file"],
      match: ["awk -f prog.awk f"],
      not_match: ["awk 1 f"],
    },
    {
      effect: "write",
      why: 'its program writes to a file (`print > "file"`)',
      when: (p) => WRITES.test(program(p) ?? ""),
      match: ["awk '{print > \"out\"}' f", 'awk \'{printf "%s", $0 >> "o"}\' f'],
      not_match: ["awk '$1 > 5 {print}' f", "awk '{print $1}' f"],
    },
  ],
};
