// The outline of one parsed file: its declarations, nested by container, each with kind, name, line
// range and a one-line signature (the text from the declaration's start to its body, on one line).
import type { SgNode } from "@ast-grep/napi";
import type { Budget } from "./budget.js";
import { OUTLINE_RULES, type DeclRule } from "./outline-rules.js";

export interface OutlineEntry {
  kind: string;
  name: string;
  start_line: number;
  end_line: number;
  signature: string;
  depth: number;
}

export interface Outline {
  entries: OutlineEntry[];
  /** Set when the budget ran out before the walk finished. */
  stoppedAtLine?: number;
}

const MAX_SIGNATURE = 200;
const CHECK_EVERY = 256;

export function hasOutline(language: string): boolean {
  return language in OUTLINE_RULES;
}

export function outlineOf(root: SgNode, source: string, language: string, budget: Budget): Outline {
  const rules = OUTLINE_RULES[language];
  const entries: OutlineEntry[] = [];
  let visited = 0;
  let stoppedAtLine: number | undefined;

  const emit = (node: SgNode, rule: DeclRule, depth: number, sigStart: number) => {
    const name = rule.name ? rule.name(node) : node.field("name")?.text();
    if (name === undefined) return;
    const base = typeof rule.kind === "function" ? rule.kind(node) : rule.kind;
    const r = node.range();
    entries.push({
      kind: depth > 0 && rule.nested ? rule.nested : base,
      name,
      start_line: r.start.line + 1,
      // A node that ends with its line break (a C #define) ends on the line before.
      end_line: r.end.column === 0 && r.end.line > r.start.line ? r.end.line : r.end.line + 1,
      signature: signatureOf(node, source, sigStart),
      depth,
    });
  };

  const visit = (parent: SgNode, depth: number, sigStart?: number) => {
    for (const child of parent.children()) {
      if (stoppedAtLine !== undefined) return;
      if (++visited % CHECK_EVERY === 0 && budget.spent()) {
        stoppedAtLine = child.range().start.line + 1;
        return;
      }
      const kind = child.kind() as string;
      const start = sigStart ?? child.range().start.index;
      const rule = rules.decls[kind];
      if (rule?.each) {
        for (const part of declaredParts(child, rule.each)) {
          const partRule = rules.decls[part.kind() as string];
          if (partRule) emit(part, partRule, depth, start);
        }
      } else if (rule) {
        emit(child, rule, depth, start);
        for (const c of child.children()) if (rule.members?.includes(c.kind() as string)) visit(c, depth + 1);
      } else if (rules.through.includes(kind)) {
        visit(child, depth, rules.prefix.includes(kind) ? start : undefined);
      }
    }
  };
  visit(root, 0);
  return { entries, stoppedAtLine };
}

/** The children (and grandchildren, for `var (...)` lists) of the kinds that each declare one name. */
function declaredParts(node: SgNode, kinds: string[]): SgNode[] {
  const out: SgNode[] = [];
  for (const c of node.children()) {
    if (!kinds.includes(c.kind() as string)) continue;
    const inner = c.children().filter((g) => kinds.includes(g.kind() as string));
    if (inner.length) for (const item of inner) out.push(item);
    else out.push(c);
  }
  return out;
}

/** From the start of the declaration (or of its `export` wrapper) to its body, on one line. */
function signatureOf(node: SgNode, source: string, from: number): string {
  const body = node.field("body");
  const r = node.range();
  const to = body && body.range().start.index > r.start.index ? body.range().start.index : r.end.index;
  let text = source.slice(Math.min(from, r.start.index), to);
  if (!body) text = text.split("\n")[0];
  text = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/\s*[{:;]$/, "");
  return text.length > MAX_SIGNATURE ? text.slice(0, MAX_SIGNATURE - 1) + "…" : text;
}

/** One line per entry, indented by depth: `12-40 class Foo: export class Foo extends Bar`. */
export function renderOutline(entries: readonly OutlineEntry[]): string[] {
  return entries.map((e) => `${"  ".repeat(e.depth)}${e.start_line}-${e.end_line} ${e.kind} ${e.name}: ${e.signature}`);
}
