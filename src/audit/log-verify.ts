// `latch log verify`: check a policy log line by line — the JSON, the sequence numbers, the chain of
// previous_sha256, every record_sha256, the record shapes, that nothing follows run_finished, that
// the log ends with run_finished, and that every allowed effect has an outcome. The first fault wins.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment,
   @typescript-eslint/no-unsafe-argument -- a log line is untrusted JSON, and this file checks it field by field */
import { GENESIS_SHA256, lineHash } from "./log.js";

export interface VerifyResult {
  ok: boolean;
  lines: number;
  effects: number;
  /** The hash of the last good line (the chain's head). */
  head: string;
  /** The first and last time a record up to the fault names (run_started, decisions, run_finished). */
  first_at?: string;
  last_at?: string;
  /** The sessions whose calls the log decided, in order of first call. */
  sessions: string[];
  /** A run_finished record was read. */
  finished: boolean;
  fault?: { line: number; message: string };
}

const RECORD_TYPES = [
  "run_started",
  "effect_decision",
  "effect_outcome",
  "run_finished",
  "config_reloaded",
  "anchor_gap",
  "servers_approved",
];

export function verifyLog(text: string): VerifyResult {
  const lines = text.split("\n");
  const trailingNewline = lines[lines.length - 1] === "";
  if (trailingNewline) lines.pop();
  let previous = GENESIS_SHA256;
  let finished = false;
  const pending = new Map<number, number>(); // allowed effect_id → its decision's line
  const decided = new Set<number>();
  let effects = 0;
  let firstAt: string | undefined;
  let lastAt: string | undefined;
  const sessions = new Set<string>();
  const seen = () => ({
    ...(firstAt !== undefined ? { first_at: firstAt } : {}),
    ...(lastAt !== undefined ? { last_at: lastAt } : {}),
    sessions: [...sessions],
    finished,
  });
  const fail = (line: number, message: string): VerifyResult => ({
    ok: false,
    lines: lines.length,
    effects,
    head: previous,
    ...seen(),
    fault: { line, message },
  });

  if (lines.length === 0) return fail(1, "the log is empty: it has no run_started record");
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    if (i === lines.length - 1 && !trailingNewline)
      return fail(n, "the last line has no newline: the log was cut mid-line");
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see the file's first comment
    let obj: any;
    try {
      obj = JSON.parse(lines[i]);
    } catch {
      return fail(n, "not valid JSON");
    }
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return fail(n, "not a JSON object");
    const keys = Object.keys(obj).sort().join(",");
    if (keys !== "previous_sha256,record,record_sha256,sequence")
      return fail(n, `expected exactly sequence, previous_sha256, record, record_sha256; got ${keys}`);
    if (obj.sequence !== n)
      return fail(
        n,
        `sequence is ${JSON.stringify(obj.sequence)}, expected ${n} (a line was dropped, moved or inserted)`,
      );
    if (obj.previous_sha256 !== previous)
      return fail(n, "previous_sha256 does not match the line before (a line was dropped, moved, inserted or changed)");
    if (obj.record_sha256 !== lineHash(obj.sequence, obj.previous_sha256, obj.record))
      return fail(n, "record_sha256 does not match the line's content (the line was changed)");
    if (finished) return fail(n, "a record follows run_finished (appended after the run ended)");
    const rec = obj.record;
    if (rec === null || typeof rec !== "object" || !RECORD_TYPES.includes(rec.type))
      return fail(n, `unknown record type ${JSON.stringify(rec?.type)}`);
    if (n === 1 && rec.type !== "run_started") return fail(n, "the first record is not run_started");
    if (n > 1 && rec.type === "run_started") return fail(n, "run_started appears again mid-log");
    if (typeof rec.at === "string") {
      firstAt ??= rec.at;
      lastAt = rec.at;
    }
    if (rec.type === "effect_decision" && typeof rec.session === "string") sessions.add(rec.session);
    if (rec.type === "effect_decision") {
      if (!Number.isInteger(rec.effect_id) || decided.has(rec.effect_id))
        return fail(n, `effect_id ${JSON.stringify(rec.effect_id)} is missing or repeated`);
      decided.add(rec.effect_id);
      effects++;
      if (rec.final === "allow") pending.set(rec.effect_id, n);
    } else if (rec.type === "effect_outcome") {
      if (!decided.has(rec.effect_id))
        return fail(n, `an outcome for effect ${JSON.stringify(rec.effect_id)}, which has no decision before it`);
      if (!pending.delete(rec.effect_id))
        return fail(n, `a second outcome, or an outcome for a call that was not allowed (effect ${rec.effect_id})`);
    } else if (rec.type === "run_finished") {
      finished = true;
    }
    previous = obj.record_sha256;
  }
  const [firstPending] = [...pending.entries()].sort((a, b) => a[1] - b[1]);
  if (firstPending) return fail(firstPending[1], `effect ${firstPending[0]} was allowed but has no outcome`);
  if (!finished)
    return fail(
      lines.length + 1,
      "the log does not end with run_finished: it was truncated, or the run did not finish",
    );
  return { ok: true, lines: lines.length, effects, head: previous, ...seen() };
}
