// find: `-delete` has the capability of rm; `-fprint*` and `-fls` write files; `-exec`/`-ok` run the
// programs that follow (unwrapped and checked by the planner, see wrappers.ts). Its primaries are
// whole words, never clusters.
import type { ProgramTable } from "./types.js";

const words = (argv: readonly string[], ws: string[]) => argv.some((a) => ws.includes(a));

export const find: ProgramTable = {
  names: ["find", "gfind"],
  grammar: { abbrev: false, wholeWords: true },
  paths: (_p, argv) =>
    argv.flatMap((a, i) => (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(a) ? [argv[i + 1] ?? ""] : [])),
  rules: [
    {
      effect: "write",
      why: "deletes what it finds (`-delete`, the capability of rm)",
      when: (_p, argv) => words(argv, ["-delete"]),
      match: ["find . -name '*.o' -delete"],
      not_match: ["find . -name '*.ts'", "find . -name -delete.txt -print"],
    },
    {
      effect: "write",
      why: "writes its list to a file (`-fprint`, `-fprint0`, `-fprintf`, `-fls`)",
      when: (_p, argv) => words(argv, ["-fprint", "-fprint0", "-fprintf", "-fls"]),
      match: ["find . -fprint out", "find . -fls out", "find . -fprintf out %p"],
      not_match: ["find . -print", "find . -printf %p"],
    },
  ],
};
