// Turning AST results into what the model reads: lines bounded by the output budget, and notes that
// say what was left out and how to get it.
import { astGrep, grammarOf, type Language } from "./languages.js";
import type { Budget } from "./budget.js";
import type { SearchOutcome } from "./search.js";

/** Keep whole items while their JSON fits in `maxBytes`; the count kept. */
export function fitting<T>(items: readonly T[], maxBytes: number): number {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += Buffer.byteLength(typeof items[i] === "string" ? (items[i] as string) : JSON.stringify(items[i])) + 1;
    if (bytes > maxBytes) return i;
  }
  return items.length;
}

/** Where a stopped call got to, in words: "searched 120 of 3000 files …". */
export function stopNote(budget: Budget, o: SearchOutcome): string | undefined {
  const why = budget.reason();
  if (!why) return undefined;
  const total = o.walkComplete ? `${o.filesFound}` : `at least ${o.filesFound} (the walk was stopped too)`;
  const where = o.stoppedBefore ? `; the first file not searched is \`${o.stoppedBefore}\`` : "";
  const head =
    why === "cancelled"
      ? "Cancelled"
      : `Stopped by the time budget after ${budget.elapsedMs()} ms (tools_policies.ast._ast_deadline = ${budget.ms} ms)`;
  return `${head}: searched ${o.filesSearched} of ${total} files${where}. The results so far are shown. Narrow path or lang${why === "deadline" ? ", or raise _ast_deadline" : ""}.`;
}

export function skippedNote(o: SearchOutcome): string | undefined {
  const parts = Object.entries(o.skipped).map(([why, n]) => `${n} ${why}`);
  return parts.length ? `Skipped files: ${parts.join(", ")} (too large means over _max_read_bytes).` : undefined;
}

/** For a search that found nothing: which languages do not parse the pattern cleanly. */
export function patternNote(
  pattern: string,
  langs: readonly Language[],
  invalidIn: Record<string, string>,
): string | undefined {
  const problems: string[] = Object.entries(invalidIn).map(([l, why]) => `${l}: ${why}`);
  for (const l of langs) {
    if (invalidIn[l.name]) continue;
    const root = astGrep().parse(grammarOf(l), pattern.split("$").join(l.expando)).root();
    if (root.find({ rule: { kind: "ERROR" } })) problems.push(`${l.name}: the pattern has a syntax error`);
  }
  return problems.length
    ? `The pattern may not mean what you expect — ${problems.join("; ")}. Patterns are code of the language, with $NAME or $$$NAME for the parts that vary.`
    : undefined;
}

export function joinNotes(...notes: (string | undefined)[]): string | undefined {
  const kept = notes.filter((n): n is string => n !== undefined);
  return kept.length ? kept.join(" ") : undefined;
}
