// The sh grammar: mvdan-sh (a GopherJS build of mvdan.cc/sh) in POSIX mode, wrapped at once into
// latch's own typed tree. No GopherJS object leaves this file. Anything the wrapper does not know is
// kept as an explicit "unsupported" node, so the planner can refuse it by name (fail closed).
// Why mvdan-sh and not its successor sh-syntax (WASM): sh-syntax 0.7 measured 8.5 ms a parse here,
// against 1.3 ms for latch's whole plan of a line at p50, and its JSON tree gives a command's body only
// as positions. The GopherJS build is deprecated upstream; it stays pinned until that changes.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment --
   mvdan-sh ships no types: this file is the one place its objects are read, and each is checked here. */
import { createRequire } from "node:module";

export type ShPart =
  | { type: "lit"; value: string }
  | { type: "sgl"; value: string; dollar: boolean }
  | { type: "dbl"; parts: ShPart[]; dollar: boolean }
  | { type: "expansion"; construct: string };

export interface ShWord {
  parts: ShPart[];
}

type ShCommand =
  | { type: "call"; assigns: string[]; args: ShWord[] }
  | { type: "and" | "or" | "pipe"; left: ShStmt; right: ShStmt }
  | { type: "unsupported"; construct: string };

export interface ShStmt {
  negated: boolean;
  background: boolean;
  /** The constructs of each redirection on the statement ("redirection", "heredoc"). */
  redirects: string[];
  /** Null for a statement made of redirections only (`> file`). */
  cmd: ShCommand | null;
}

export interface ShScript {
  stmts: ShStmt[];
}

export type ParseOutcome =
  | { ok: true; script: ShScript }
  /** `construct` names the bash feature that made the line fail as POSIX, when one is found. */
  | { ok: false; error: string; incomplete: boolean; construct?: string };

// mvdan-sh ships no types; this is the little of its surface we touch.
type GoNode = any; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Syntax {
  NewParser(...opts: unknown[]): { Parse(src: string, name: string): GoNode };
  Variant(lang: unknown): unknown;
  LangPOSIX: unknown;
  NodeType(node: GoNode): string;
  LangBash: unknown;
  Walk(node: GoNode, fn: (node: GoNode) => boolean): void;
}
// mvdan-sh is a large GopherJS bundle (hundreds of ms to load): loaded on the first parse, so a latch
// process that never plans a command line does not pay for it at startup.
let loaded: Syntax | undefined;
function sh(): Syntax {
  loaded ??= (createRequire(import.meta.url)("mvdan-sh") as { syntax: Syntax }).syntax;
  return loaded;
}

// Token values of mvdan.cc/sh/v3/syntax BinCmdOperator, as this build numbers them (probed).
const BIN_OPS: Record<number, "and" | "or" | "pipe"> = { 10: "and", 11: "or", 12: "pipe", 13: "pipe" };
// RedirOperator values for heredocs (<< and <<-); every other redirection is "redirection".
const HEREDOC_OPS = new Set([61, 62]);

const COMPOUND_NAMES: Record<string, string> = {
  IfClause: "an if statement",
  WhileClause: "a while/until loop",
  ForClause: "a for loop",
  CaseClause: "a case statement",
  Block: "a { } group",
  Subshell: "a ( ) subshell",
  FuncDecl: "a function definition",
  ArithmCmd: "an arithmetic command",
  TestClause: "a [[ ]] test",
  DeclClause: "a declaration",
  LetClause: "a let expression",
  TimeClause: "the time keyword",
  CoprocClause: "a coprocess",
};

const PART_NAMES: Record<string, string> = {
  ParamExp: "a variable expansion ($VAR or ${…})",
  CmdSubst: "a command substitution ($(…) or backticks)",
  ArithmExp: "an arithmetic expansion ($((…)))",
  ProcSubst: "a process substitution (<(…) or >(…))",
  ExtGlob: "an extended glob",
  BraceExp: "a brace expansion",
};

/** Parse a command line as POSIX sh. A syntax error is an outcome, not an exception. */
export function parseLine(src: string): ParseOutcome {
  let file: GoNode;
  try {
    file = sh().NewParser(sh().Variant(sh().LangPOSIX)).Parse(src, "");
  } catch (err) {
    // mvdan-sh throws its Go ParseError as a plain object with an Error() method.
    const e = err as { Error?: () => string; Incomplete?: boolean; message?: string };
    const message = typeof e?.Error === "function" ? e.Error() : String(e?.message ?? err);
    return { ok: false, error: message, incomplete: e?.Incomplete === true, construct: bashConstruct(src) };
  }
  return { ok: true, script: { stmts: list(file.Stmts).map((s) => wrapStmt(s)) } };
}

function list(goSlice: GoNode): GoNode[] {
  return goSlice == null ? [] : Array.from(goSlice as ArrayLike<GoNode>);
}

function wrapStmt(s: GoNode): ShStmt {
  return {
    negated: s.Negated === true,
    // A coprocess is a background job as far as latch is concerned.
    background: s.Background === true || s.Coprocess === true,
    redirects: list(s.Redirs).map((r) => (r.Hdoc != null || HEREDOC_OPS.has(Number(r.Op)) ? "heredoc" : "redirection")),
    cmd: s.Cmd == null ? null : wrapCommand(s.Cmd),
  };
}

function wrapCommand(c: GoNode): ShCommand {
  const kind = sh().NodeType(c);
  if (kind === "CallExpr") {
    return {
      type: "call",
      assigns: list(c.Assigns).map((a) => String(a.Name?.Value ?? "?")),
      args: list(c.Args).map((w) => wrapWord(w)),
    };
  }
  if (kind === "BinaryCmd") {
    const op = BIN_OPS[Number(c.Op)];
    if (op === undefined) return { type: "unsupported", construct: `the operator with token ${String(c.Op)}` };
    return { type: op, left: wrapStmt(c.X), right: wrapStmt(c.Y) };
  }
  return { type: "unsupported", construct: COMPOUND_NAMES[kind] ?? `a ${kind} construct` };
}

function wrapWord(w: GoNode): ShWord {
  return { parts: list(w.Parts).map((p) => wrapPart(p)) };
}

function wrapPart(p: GoNode): ShPart {
  const kind = sh().NodeType(p);
  switch (kind) {
    case "Lit":
      // The value keeps backslashes as written, but line continuations are dropped from it (and
      // carriage returns from the line): the planner refuses both in the raw line before parsing.
      return { type: "lit", value: String(p.Value) };
    case "SglQuoted":
      return { type: "sgl", value: String(p.Value), dollar: p.Dollar === true };
    case "DblQuoted":
      return { type: "dbl", parts: list(p.Parts).map((q) => wrapPart(q)), dollar: p.Dollar === true };
    default:
      return { type: "expansion", construct: PART_NAMES[kind] ?? `a ${kind} expansion` };
  }
}

// Bash-only syntax, by node type (and operator token), so a refusal can name what the line used.
const BASH_NODES: Record<string, string> = {
  ProcSubst: "a process substitution (<(…) or >(…))",
  TestClause: "a [[ ]] test",
  ArrayExpr: "an array",
  ExtGlob: "an extended glob",
  CoprocClause: "a coprocess",
  LetClause: "a let expression",
  DeclClause: "a declaration (declare, local, export …)",
  FuncDecl: "a function definition",
};
const BASH_REDIRECTS: Record<number, string> = {
  63: "a here-string (<<<)",
  64: "a redirection (&>)",
  65: "a redirection (&>>)",
};

/**
 * For a line that is not POSIX sh: the bash construct in it, found by parsing it as bash. The bash
 * tree is only read for a name; it is never planned or run.
 */
function bashConstruct(src: string): string | undefined {
  let file: GoNode;
  try {
    file = sh().NewParser(sh().Variant(sh().LangBash)).Parse(src, "");
  } catch {
    return undefined; // not bash either: the POSIX parse error stands on its own
  }
  let found: string | undefined;
  sh().Walk(file, (node) => {
    if (found !== undefined || node == null) return false;
    const kind = sh().NodeType(node);
    if (kind === "Redirect") found = BASH_REDIRECTS[Number(node.Op)];
    else if (kind === "BinaryCmd" && Number(node.Op) === 13) found = "a pipe (|&)";
    else found = BASH_NODES[kind];
    return found === undefined;
  });
  return found;
}
