// What `latch log verify` and `latch log list` report for each run log: its chain (verifyLog), its
// head against the one latch kept in the state database, and for each folder the runs whose heads
// are kept but whose files are gone: pruned by retention (said), or removed by someone else (a fault).
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { FolderHead, LogHead, LogHeads } from "./log-heads.js";
import { RUN_LOG } from "./log-files.js";
import { verifyLog } from "./log-verify.js";
import { realpathOf } from "../fs/realpath.js";

export interface RunReport {
  file: string;
  bytes: number;
  records: number;
  effects: number;
  first_at: string | null;
  last_at: string | null;
  sessions: string[];
  /** The run ended (run_finished); a run still going, or cut short, has not. */
  finished: boolean;
  /** The head kept in the state database: it matches, it differs (rewritten or cut), or none is kept. */
  head: "matches" | "differs" | "not kept";
  kept?: LogHead;
  ok: boolean;
  /** The first thing wrong: a broken record (its line), another head, or no head kept (unless allowed). */
  fault?: { line?: number; message: string };
}

/** Verify one log file. `requireHead`: a log with no head kept fails (a log forged whole has none). */
export function verifyRunFile(file: string, heads: LogHeads | undefined, requireHead: boolean): RunReport {
  let text: string;
  let bytes: number;
  try {
    text = readFileSync(file, "utf8");
    bytes = statSync(file).size;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return {
      ...empty(file),
      fault: { message: `cannot be read (${code})` },
    };
  }
  const r = verifyLog(text);
  const kept = heads?.get(path.resolve(file)) ?? heads?.get(realpathOf(file));
  const head = kept === undefined ? "not kept" : kept.head === r.head && kept.lines === r.lines ? "matches" : "differs";
  const report: RunReport = {
    file,
    bytes,
    records: r.lines,
    effects: r.effects,
    first_at: r.first_at ?? null,
    last_at: r.last_at ?? null,
    sessions: r.sessions,
    finished: r.finished,
    head,
    ...(kept ? { kept } : {}),
    ok: r.ok,
  };
  if (!r.ok) return { ...report, fault: r.fault };
  if (head === "differs")
    return {
      ...report,
      ok: false,
      fault: {
        message: `the chain is whole, but latch kept another head for this log (${kept!.lines} lines, sha256 ${kept!.head}, at ${kept!.updated_at}); this file has ${r.lines} lines ending in ${r.head}: it was rewritten or cut`,
      },
    };
  if (head === "not kept" && requireHead)
    return {
      ...report,
      ok: false,
      fault: {
        message:
          "no head is kept for it in the state database (another state dir: pass --state-dir; a log from before heads were kept, or made elsewhere: pass --no-head to check its chain alone)",
      },
    };
  return report;
}

function empty(file: string): RunReport {
  return {
    file,
    bytes: 0,
    records: 0,
    effects: 0,
    first_at: null,
    last_at: null,
    sessions: [],
    finished: false,
    head: "not kept",
    ok: false,
  };
}

export interface GoneRuns {
  /** Removed by retention: their heads are kept, marked pruned. */
  pruned: FolderHead[];
  /** Heads kept for run logs of this folder whose files are gone, and not by retention. */
  missing: FolderHead[];
}

/** The run logs (latch's own names) that latch kept a head for in `dir` and that are no longer there. */
export function goneRuns(dir: string, heads: LogHeads): GoneRuns {
  const out: GoneRuns = { pruned: [], missing: [] };
  for (const h of heads.inFolder(canonical(dir))) {
    if (!RUN_LOG.test(path.basename(h.file)) || exists(h.file)) continue;
    (h.pruned_at ? out.pruned : out.missing).push(h);
  }
  return out;
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

/** The folder as latch named it when it kept heads (the state dir is opened by its real path). */
export function canonical(dir: string): string {
  try {
    return realpathOf(dir);
  } catch {
    return path.resolve(dir);
  }
}
