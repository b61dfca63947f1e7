// The scan itself (issue 29): known values by exact search, then the format rules (latch's table and
// secretlint's preset, secretlint.ts), each run only where one of its keywords occurs. Pure and synchronous: the worker (scan-worker.ts) runs it, so a
// rule that runs away stalls a thread the gate can terminate, not the server. Overlapping findings
// are merged; the first (longest known value, then the table's order) names the merged range.
import type { Needle } from "./known.js";
import { FORMAT_RULES, PLACEHOLDER_PASSWORDS, type FormatRule } from "./rules.js";
import { keywordFinder, type KeywordHit } from "./keywords.js";
import { MAINTAINED_KEYWORDS, scanMaintained } from "./secretlint.js";

export interface Finding {
  rule: string;
  start: number;
  end: number;
}

export interface Detectors {
  needles: readonly Needle[];
  rules: readonly FormatRule[];
}

const WORD = /[A-Za-z0-9_]/;
/** A URL scheme ending where `://` starts, itself not part of a longer word. */
const SCHEME = /(?:^|[^A-Za-z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]{1,20}$/;

/** Nothing shorter can hold a finding: the shortest known value and the shortest format are longer. */
export const MIN_SCANNED = 8;

const compiled = new Map<FormatRule, RegExp>();
function regexOf(rule: FormatRule): RegExp {
  let re = compiled.get(rule);
  if (!re) {
    re = new RegExp(rule.pattern, `g${rule.group ? "d" : ""}${rule.flags ?? ""}`);
    compiled.set(rule, re);
  }
  return re;
}

/** Both tables' keywords, found in one pass (keywords.ts); per rule table, which of its rules each keyword opens. */
const finders = new WeakMap<
  readonly FormatRule[],
  { find: (t: string) => KeywordHit[]; rules: Map<string, FormatRule[]> }
>();
function finderFor(rules: readonly FormatRule[]) {
  let f = finders.get(rules);
  if (!f) {
    const byKeyword = new Map<string, FormatRule[]>();
    for (const r of rules) for (const k of r.keywords) byKeyword.set(k, [...(byKeyword.get(k) ?? []), r]);
    const find = keywordFinder([...byKeyword.keys(), ...MAINTAINED_KEYWORDS]);
    f = { find, rules: byKeyword };
    finders.set(rules, f);
  }
  return f;
}

export async function scanText(text: string, d: Detectors = { needles: [], rules: FORMAT_RULES }): Promise<Finding[]> {
  if (text.length < MIN_SCANNED) return [];
  const found: Finding[] = [];
  for (const n of d.needles) {
    for (let at = text.indexOf(n.text); at !== -1; at = text.indexOf(n.text, at + n.text.length))
      found.push({ rule: n.rule, start: at, end: at + n.text.length });
  }
  const finder = finderFor(d.rules);
  const hits = finder.find(text);
  const present = new Set<FormatRule>();
  for (const h of hits) for (const r of finder.rules.get(h.key) ?? []) present.add(r);
  for (const rule of present) {
    const re = regexOf(rule);
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (rule.boundary && m.index > 0 && WORD.test(text[m.index - 1])) continue;
      if (rule.group) {
        if (!SCHEME.test(text.slice(Math.max(0, m.index - 22), m.index))) continue;
        const span = m.indices?.[rule.group];
        const value = m[rule.group];
        if (span && value !== undefined && !PLACEHOLDER_PASSWORDS.test(value))
          found.push({ rule: rule.id, start: span[0], end: span[1] });
      } else found.push({ rule: rule.id, start: m.index, end: m.index + m[0].length });
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  if (text.includes(CUT_MARK)) for (const item of cutFragments(text, d)) found.push(item);
  // After latch's own: where both find the same secret, the merged range keeps the table's name.
  for (const item of await scanMaintained(text, hits)) found.push(item);
  return merge(found);
}

/** The marker of process output cut in the middle (src/process/capture.ts). */
const CUT_MARK = "[\u2026 latch cut ";
const CUT_RE = /\n\[\u2026 latch cut \d+ bytes from the middle of [^\n]*\u2026\]\n/g;
const TOKENISH = /[A-Za-z0-9_+/=%.-]/;

/**
 * A secret the output cut split in two leaves a part on each side of the marker, neither of which
 * matches whole. The part before is redacted when it begins a known value or a format's keyword; the
 * part after, when it ends a known value or follows such a part.
 */
function cutFragments(text: string, d: Detectors): Finding[] {
  const out: Finding[] = [];
  for (const m of text.matchAll(CUT_RE)) {
    let a = m.index;
    while (a > 0 && TOKENISH.test(text[a - 1])) a--;
    const before = text.slice(a, m.index);
    let b = m.index + m[0].length;
    while (b < text.length && TOKENISH.test(text[b])) b++;
    const after = text.slice(m.index + m[0].length, b);
    const lower = before.toLowerCase();
    const head =
      before.length >= 4 &&
      (d.needles.some((n) => overlapsEnd(before, n.text)) ||
        d.rules.some((r) => r.keywords.some((k) => k !== "://" && lower.includes(k))));
    if (head) out.push({ rule: "cut-secret", start: a, end: m.index });
    const tail = after.length >= 4 && (head || d.needles.some((n) => overlapsStart(after, n.text)));
    if (tail) out.push({ rule: "cut-secret", start: m.index + m[0].length, end: b });
  }
  return out;
}

/** Sorted, overlapping ranges joined; the earlier-found rule names a joined range. */
function merge(found: Finding[]): Finding[] {
  if (found.length < 2) return found;
  const order = new Map(found.map((f, i) => [f, i]));
  found.sort((a, b) => a.start - b.start || order.get(a)! - order.get(b)!);
  const out: Finding[] = [];
  for (const f of found) {
    const last = out[out.length - 1];
    if (last && f.start < last.end) {
      if (f.end > last.end) last.end = f.end;
      if (order.get(f)! < (order.get(last) ?? Infinity)) last.rule = f.rule;
    } else {
      const copy = { ...f };
      order.set(copy, order.get(f)!);
      out.push(copy);
    }
  }
  return out;
}

export const PLACEHOLDER_PREFIX = "[REDACTED:";

/** The text with each finding replaced by `[REDACTED:<rule>]`. */
export function redactText(text: string, findings: readonly Finding[]): string {
  let out = "";
  let at = 0;
  for (const f of findings) {
    out += text.slice(at, f.start) + `${PLACEHOLDER_PREFIX}${f.rule}]`;
    at = f.end;
  }
  return out + text.slice(at);
}

/** Does `s` end with the first 4 or more characters of `secret`? */
function overlapsEnd(s: string, secret: string): boolean {
  for (let k = Math.min(s.length, secret.length); k >= 4; k--) if (s.endsWith(secret.slice(0, k))) return true;
  return false;
}

/** Does `s` start with the last 4 or more characters of `secret`? */
function overlapsStart(s: string, secret: string): boolean {
  for (let k = Math.min(s.length, secret.length); k >= 4; k--) if (s.startsWith(secret.slice(-k))) return true;
  return false;
}
