// Interpreters: inline code (`-e`, `-c`, `-p`) executes code latch cannot check; a script file or a
// module run from the workspace is workspace code; with no program at all they read code from stdin.
import type { ParsedArgs, ProgramRule, ProgramTable } from "./types.js";

const onlyInfo = (p: ParsedArgs, info: string[]) => p.options.some((o) => info.includes(o.name));

interface Interp {
  names: string[];
  shortValue: string;
  longValue: string[];
  inline: string[];
  /** Options that load code from a path or module (`-r`, `--import`, `-m`). */
  load: string[];
  /** Options that print and exit (`--version`). */
  info: string[];
  /** In-place edit (`perl -i`). */
  inPlace?: string[];
  examples: { inline: string[]; load: string[]; script: string[]; safe: string[] };
}

function interpreter(x: Interp): ProgramTable {
  const name = x.names[0];
  const hasInline = (p: ParsedArgs) =>
    p.options.some(
      (o) =>
        x.inline.includes(o.name) ||
        x.inline.some((l) => l.startsWith("--") && o.name.length >= 4 && l.startsWith(o.name)),
    );
  const rules: ProgramRule[] = [
    {
      effect: "inline",
      why: `runs inline code (${x.inline.map((o) => `\`${o}\``).join(", ")})`,
      when: hasInline,
      match: x.examples.inline,
      not_match: x.examples.safe,
    },
    {
      effect: "workspace",
      why: "runs a script file or loads a module (workspace code)",
      when: (p) =>
        p.options.some((o) => x.load.includes(o.name)) ||
        (!hasInline(p) && p.operands.length > 0 && p.operands[0] !== "-"),
      match: [...x.examples.load, ...x.examples.script],
      not_match: [...x.examples.safe, ...x.examples.inline.slice(0, 1)],
    },
    {
      effect: "inline",
      why: "reads its program from standard input",
      when: (p) =>
        !hasInline(p) &&
        !onlyInfo(p, x.info) &&
        !p.options.some((o) => x.load.includes(o.name)) &&
        (p.operands.length === 0 || p.operands[0] === "-"),
      match: [name, `${name} -`],
      not_match: [...x.examples.safe, ...x.examples.script],
    },
  ];
  if (x.inPlace)
    rules.push({
      effect: "write",
      why: "edits files in place (`-i`)",
      when: (p) => p.options.some((o) => x.inPlace!.includes(o.name)),
      match: [`${name} -i -pe s/a/b/ f`],
      not_match: x.examples.safe,
    });
  return {
    names: x.names,
    grammar: { abbrev: false, stopAtOperand: true, shortValue: x.shortValue, longValue: x.longValue },
    rules,
  };
}

export const INTERPRETERS: readonly ProgramTable[] = [
  interpreter({
    names: ["node", "nodejs", "bun", "deno"].slice(0, 2),
    shortValue: "eprC",
    longValue: [
      "eval",
      "print",
      "require",
      "import",
      "loader",
      "experimental-loader",
      "conditions",
      "env-file",
      "input-type",
      "title",
    ],
    inline: ["-e", "-p", "--eval", "--print"],
    load: ["-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file"],
    info: ["-v", "--version", "-h", "--help", "--v8-options", "-c", "--check"],
    examples: {
      inline: ["node -e 'console.log(1)'", "node -p 1", "node --eval=x", "node -pe 1"],
      load: ["node --import tsx x.ts", "node -r ./hook.js"],
      script: ["node scripts/gen.js --out build"],
      safe: ["node --version", "node -v"],
    },
  }),
  interpreter({
    names: ["python3", "python", "python2"],
    shortValue: "cmWXQ",
    longValue: ["check-hash-based-pycs"],
    inline: ["-c"],
    load: ["-m"],
    info: ["-V", "--version", "-h", "--help"],
    examples: {
      inline: ["python3 -c 1", "python3 -Ic 'import os'", "python -c x"],
      load: ["python3 -m pytest -q tests", "python3 -mhttp.server"],
      script: ["python3 setup.py build"],
      safe: ["python3 --version", "python3 -V"],
    },
  }),
  interpreter({
    names: ["perl"],
    shortValue: "eEImMCdDx",
    longValue: [],
    inline: ["-e", "-E"],
    load: ["-m", "-M", "-d"],
    info: ["-v", "-V", "--version", "-h"],
    inPlace: ["-i"],
    examples: {
      inline: ["perl -e 'print 1'", "perl -ne 'print' f", "perl -E 'say 1'"],
      load: ["perl -MPOSIX -le 1x"],
      script: ["perl script.pl"],
      safe: ["perl -v", "perl --version"],
    },
  }),
  interpreter({
    names: ["ruby", "irb"].slice(0, 1),
    shortValue: "eIrCFEKTWx",
    longValue: ["encoding", "external-encoding", "internal-encoding", "enable", "disable"],
    inline: ["-e"],
    load: ["-r"],
    info: ["-v", "--version", "-h", "--help"],
    inPlace: ["-i"],
    examples: {
      inline: ["ruby -e 'puts 1'", "ruby -ne 'print' f"],
      load: ["ruby -rjson x.rb"],
      script: ["ruby script.rb"],
      safe: ["ruby --version", "ruby -v"],
    },
  }),
];
