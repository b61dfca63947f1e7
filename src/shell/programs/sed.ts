// sed: the script decides. `e` (and the `e` flag of `s`) runs a shell command; `w`/`W` (and the `w`
// flag of `s`) write a file; `r`/`R` read one; `-i` edits in place. A script from `-f FILE` cannot be
// seen, so it counts as workspace code.
import type { ParsedArgs, ProgramTable } from "./types.js";

interface SedCommands {
  exec: boolean;
  writes: string[];
  reads: string[];
  unknown: boolean;
}

/** The commands of a sed script that run, write or read, found by a small scanner of GNU sed's syntax. */
function scanSedScript(script: string): SedCommands {
  const out: SedCommands = { exec: false, writes: [], reads: [], unknown: false };
  let i = 0;
  const n = script.length;
  const restOfLine = () => {
    const end = script.indexOf("\n", i);
    const s = script.slice(i, end === -1 ? n : end).trim();
    i = end === -1 ? n : end + 1;
    return s;
  };
  const skipDelimited = (d: string) => {
    // one part of s/…/…/ or y/…/…/ or an address /re/: up to the next unescaped delimiter
    while (i < n && script[i] !== d) i += script[i] === "\\" ? 2 : 1;
    i++;
  };
  while (i < n) {
    const c = script[i];
    if (/[\s;}{!]/.test(c)) {
      i++;
      continue;
    }
    // addresses: numbers, $, first~step, /re/ or \cREc, and a range's comma
    if (/[0-9$,~+]/.test(c)) {
      i++;
      continue;
    }
    if (c === "/" || c === "\\") {
      if (c === "\\") i++;
      const d = script[i++];
      skipDelimited(d);
      while (/[IM]/.test(script[i] ?? "")) i++;
      continue;
    }
    i++;
    if (c === "#" || "aic".includes(c)) restOfLine();
    else if (c === ":" || "btT".includes(c)) {
      while (i < n && !/[;\n]/.test(script[i])) i++;
    } else if (c === "e") {
      out.exec = true;
      restOfLine();
    } else if ("wW".includes(c)) out.writes.push(restOfLine());
    else if ("rR".includes(c)) out.reads.push(restOfLine());
    else if (c === "s" || c === "y") {
      const d = script[i++];
      skipDelimited(d);
      skipDelimited(d);
      if (c === "s") {
        while (i < n && /[gpiImMe0-9]/.test(script[i])) {
          if (script[i] === "e") out.exec = true;
          i++;
        }
        if (script[i] === "w") {
          i++;
          out.writes.push(restOfLine());
        }
      }
    } else if (!"=dDgGhHlLnNpPqQxzFv".includes(c)) out.unknown = true;
    else if ("qQlL".includes(c)) while (/[0-9 ]/.test(script[i] ?? "")) i++;
  }
  return out;
}

/** The scripts a sed command line runs: every -e value, or the first operand when there is none. */
function sedScripts(p: ParsedArgs): string[] {
  const given = p.options.filter((o) => o.name === "-e" || (o.name.length >= 4 && "--expression".startsWith(o.name)));
  if (given.length > 0) return given.map((o) => o.value ?? "");
  if (p.options.some((o) => o.name === "-f" || o.name.startsWith("--fi"))) return [];
  return p.operands.length > 0 ? [p.operands[0]] : [];
}

const scanned = (p: ParsedArgs) => sedScripts(p).map(scanSedScript);

export const sed: ProgramTable = {
  names: ["sed", "gsed"],
  grammar: { abbrev: true, shortValue: "efl", longValue: ["expression", "file", "line-length"] },
  paths: (p) => scanned(p).flatMap((s) => [...s.writes, ...s.reads]),
  notPaths: (p) => sedScripts(p),
  rules: [
    {
      effect: "exec",
      why: "its script runs a shell command (the `e` command, or the `e` flag of `s`)",
      when: (p) => scanned(p).some((s) => s.exec),
      match: ["sed 1e\\ id f", "sed 's/x/id/e' f", "sed -e 's/a/b/ge' f", "sed -n 'e id' f"],
      not_match: ["sed -n 1,5p f", "sed s/e/E/g f", "sed -e 's/x/e/' f", "sed '/e/d' f"],
    },
    {
      effect: "exec",
      why: "its script has a command latch does not know",
      when: (p) => scanned(p).some((s) => s.unknown),
      match: ["sed 'k' f"],
      not_match: ["sed -n 1,5p f", "sed '$!N;P;D' f"],
    },
    {
      effect: "workspace",
      why: "reads its script from a file (`-f`), which latch does not read",
      options: ["-f", "--file"],
      match: ["sed -f script.sed f"],
      not_match: ["sed -n 1p f"],
    },
    {
      effect: "write",
      why: "writes files (`-i`, or `w`/`W` in its script)",
      when: (p) =>
        p.options.some((o) => o.name === "-i" || o.name.startsWith("--in")) ||
        scanned(p).some((s) => s.writes.length > 0),
      match: [
        "sed -i s/a/b/ f",
        "sed -i.bak s/a/b/ f",
        "sed --in-place=.b s/a/b/ f",
        "sed 's/a/b/w out' f",
        "sed -n 'w out' f",
        "sed -e '1W out' f",
      ],
      not_match: ["sed -n 1,5p f", "sed s/w/W/ f"],
    },
  ],
};
