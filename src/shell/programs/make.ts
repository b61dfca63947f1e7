// make runs the recipes of a Makefile, which is workspace code; `--eval` runs inline make code.
import type { ProgramTable } from "./types.js";

export const make: ProgramTable = {
  names: ["make", "gmake"],
  grammar: {
    abbrev: true,
    shortValue: "CfIjlOoW",
    longValue: [
      "directory",
      "file",
      "makefile",
      "include-dir",
      "jobs",
      "load-average",
      "old-file",
      "what-if",
      "eval",
      "output-sync",
    ],
  },
  base: [{ effect: "workspace", why: "runs the recipes of a Makefile (workspace code)" }],
  rules: [
    {
      effect: "inline",
      why: "evaluates make code given inline (`--eval`)",
      options: ["--eval"],
      match: ["make --eval='x: ; id' x", "make --ev=x"],
      not_match: ["make -j4 test"],
    },
  ],
};
