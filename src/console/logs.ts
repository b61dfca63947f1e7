// The policy-log viewer's data: one run log's records as rows (decisions with their outcomes), and
// what `latch log verify` says of it: ok with the head hash and whether it matches the head kept in
// the state database, or the line where the chain breaks. Rows from that line on are marked
// unverified: they are shown, but nothing vouches for them.
/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   a log line is untrusted JSON; every field shown is turned into a string or a number here */
import { existsSync, readFileSync } from "node:fs";
import { runLogFiles } from "../audit/log-files.js";
import { LogHeads } from "../audit/log-heads.js";
import { verifyLog, type VerifyResult } from "../audit/log-verify.js";
import { realpathOf } from "../fs/realpath.js";

export interface RunLogEntry {
  file: string;
  bytes: number;
  started_at: string | null;
  finished: boolean;
  effects: number;
}

/** The run logs in `dir`, oldest first, each with what the viewer's list shows. */
export function runLogs(dir: string): RunLogEntry[] {
  const out: RunLogEntry[] = [];
  for (const f of runLogFiles(dir)) {
    let text: string;
    try {
      text = readFileSync(f.file, "utf8");
    } catch {
      continue; // removed meanwhile (retention)
    }
    const first = text.slice(0, text.indexOf("\n") + 1 || undefined);
    out.push({
      file: f.file,
      bytes: f.bytes,
      started_at: /"at":"([^"]+)"/.exec(first)?.[1] ?? null,
      finished: text.includes('"type":"run_finished"'),
      effects: (text.match(/"type":"effect_decision"/g) ?? []).length,
    });
  }
  return out;
}

interface LogRow {
  line: number;
  type: string;
  effect_id?: number;
  tool?: string;
  session?: string;
  final?: string;
  reason?: string;
  status?: string;
  at?: string;
  verified: boolean;
}

export interface LogViewData {
  file: string;
  verify: VerifyResult;
  /** The head kept in the state database, when there is one: a whole chain that ends elsewhere was rewritten. */
  kept?: { head: string; lines: number; matches: boolean };
  rows: LogRow[];
}

const MAX_ROWS = 20_000;

export function logView(file: string, db: string): LogViewData {
  const text = readFileSync(file, "utf8");
  const verify = verifyLog(text);
  const badFrom = verify.ok ? Infinity : verify.fault!.line;
  const rows: LogRow[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && rows.length < MAX_ROWS; i++) {
    if (lines[i] === "") continue;
    let rec: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- see the file's first comment
    try {
      rec = (JSON.parse(lines[i]) as { record?: unknown }).record ?? {};
    } catch {
      rec = { type: "(not JSON)" };
    }
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    rows.push({
      line: i + 1,
      type: str(rec.type) ?? "(unknown)",
      ...(Number.isInteger(rec.effect_id) ? { effect_id: rec.effect_id as number } : {}),
      ...(str(rec.tool) ? { tool: str(rec.tool) } : {}),
      ...(str(rec.session) ? { session: str(rec.session) } : {}),
      ...(str(rec.final) ? { final: str(rec.final) } : {}),
      ...(str(rec.reason) ? { reason: str(rec.reason) } : {}),
      ...(str(rec.status) ? { status: str(rec.status) } : {}),
      ...(str(rec.at) ? { at: str(rec.at) } : {}),
      verified: i + 1 < badFrom,
    });
  }
  let kept: LogViewData["kept"];
  if (existsSync(db)) {
    const heads = new LogHeads(db, { readonly: true });
    try {
      const h = heads.get(file) ?? heads.get(realpathOf(file));
      if (h) kept = { head: h.head, lines: h.lines, matches: h.head === verify.head && h.lines === verify.lines };
    } finally {
      heads.close();
    }
  }
  return { file: file.slice(file.lastIndexOf("/") + 1), verify, ...(kept ? { kept } : {}), rows };
}
