// The policy log of a test host, as records: what was decided for each call and how it ended.
import { readFileSync } from "node:fs";

interface LogRecord {
  type: string;
  tool?: string;
  final?: string;
  status?: string;
  effect_id?: number;
}

function logRecords(file: string): LogRecord[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { record: LogRecord }).record);
}

/** The final decision and outcome status logged for each call of `tool`, in order. */
export function callsOf(file: string, tool: string): { final: string; status?: string }[] {
  const recs = logRecords(file);
  return recs
    .filter((r) => r.type === "effect_decision" && r.tool === tool)
    .map((d) => ({
      final: d.final!,
      status: recs.find((o) => o.type === "effect_outcome" && o.effect_id === d.effect_id)?.status,
    }));
}
