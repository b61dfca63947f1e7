// latch log verify|list|show: the policy logs of a state dir (or any files and folders named). verify
// checks each run's chain, sequence numbers, hashes and outcomes, and that it ends in the head latch
// kept in the state database (a log re-chained from line 1, or cut, or forged whole, no longer
// verifies), and says which runs retention removed; it names the first bad record and exits 1 on any fault.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { visibleText } from "../approval/visible.js";
import { LogHeads } from "../audit/log-heads.js";
import { loadUnsealKey, unseal, type Sealed } from "../audit/seal.js";
import { runLogFiles } from "../audit/log-files.js";
import { canonical, goneRuns, verifyRunFile, type GoneRuns, type RunReport } from "../audit/verify-runs.js";
import { defaultStateDir } from "../fs/state.js";
import { printJson, UsageError } from "./options.js";
import { CHECKPOINT_FILE, readCheckpoints, stateDirPublicKey, type SignedCheckpoint } from "../store/checkpoint.js";
import { stateUrlOf } from "../store/open.js";
import { PgStore } from "../store/pg.js";
import { verifyFleet } from "../store/pg-verify.js";

const STATE_DIR_HELP = "the state dir that kept the logs' heads (default: LATCH_STATE_DIR, else the XDG state dir)";

/** The state database's heads, read-only, or why there are none. */
function openHeads(stateDir: string): { heads?: LogHeads; note?: string } {
  const db = path.join(stateDir, "latch.db");
  if (!existsSync(db)) return { note: `no state database at ${db}: no head can be compared` };
  return { heads: new LogHeads(db, { readonly: true }) };
}

/** The files to verify and the folders whose gone runs to report: each folder's *.jsonl, each file as named. */
function expand(targets: string[]): { files: string[]; folders: string[] } {
  const files: string[] = [];
  const folders = new Set<string>();
  for (const t of targets) {
    let dir = false;
    try {
      dir = statSync(t).isDirectory();
    } catch {
      // a missing file: verify says it cannot be read
    }
    if (dir) {
      folders.add(canonical(t));
      for (const n of readdirSync(t).sort()) if (n.endsWith(".jsonl")) files.push(path.join(t, n));
    } else {
      files.push(t);
      folders.add(canonical(path.dirname(path.resolve(t))));
    }
  }
  return { files, folders: [...folders] };
}

function span(r: RunReport): string {
  return `${r.first_at ?? "?"} .. ${r.last_at ?? "?"}`;
}

function headWords(r: RunReport): string {
  return r.head === "matches" ? "head kept" : r.head === "differs" ? "head differs" : "no head kept";
}

function verifyLine(r: RunReport): string {
  const facts = `${r.records} records, ${span(r)}, ${headWords(r)}`;
  if (r.ok) return `${r.file}: ok: ${facts}\n`;
  const where = r.fault!.line !== undefined ? `:${r.fault!.line}` : "";
  return `${r.file}${where}: ${r.fault!.message} (${facts})\n`;
}

function goneLines(dir: string, gone: GoneRuns): string {
  let out = "";
  if (gone.pruned.length) out += `${dir}: ${gone.pruned.length} runs pruned by retention, heads kept:\n`;
  for (const h of gone.pruned)
    out += `  ${path.basename(h.file)}: ${h.lines} records, head sha256 ${h.head}, pruned ${h.pruned_at}\n`;
  for (const h of gone.missing)
    out += `${h.file}: the file is gone, and not by retention: latch kept its head (${h.lines} records, sha256 ${h.head}, at ${h.updated_at})\n`;
  return out;
}

interface VerifyFlags {
  stateDir?: string;
  state?: string;
  checkpoints?: string[];
  head: boolean;
  json?: boolean;
}

/** `latch log verify --state URL`: the fleet's copies and checkpoints; the first broken record of each run named. */
async function verifyFleetCommand(url: string, stateDir: string, flags: VerifyFlags): Promise<void> {
  const files = flags.checkpoints ?? [path.join(stateDir, CHECKPOINT_FILE)];
  const exported: SignedCheckpoint[] = [];
  const trusted = new Set<string>();
  const own = stateDirPublicKey(stateDir);
  if (own) trusted.add(own);
  for (const f of files) {
    if (!existsSync(f)) {
      if (flags.checkpoints) throw new UsageError(`No checkpoints file \`${f}\`.`);
      continue;
    }
    const { checkpoints, bad } = readCheckpoints(f);
    if (bad.length) throw new UsageError(`${f}:${bad[0].line}: not a checkpoint (${bad[0].why}).`);
    for (const cp of checkpoints) {
      exported.push(cp);
      trusted.add(cp.public_key);
    }
  }
  const store = await PgStore.open(url, stateDir, { readOnly: true });
  try {
    const report = await verifyFleet(store, exported, trusted);
    if (!report.ok || report.runs.length === 0) process.exitCode = 1;
    if (flags.json) return printJson(report);
    for (const r of report.runs) {
      const what = `run ${r.run_id} (host ${r.host}, ${r.file})`;
      const facts = `${r.records} records, ${r.checkpoints} checkpoints${r.open ? ", still open" : ""}`;
      process.stdout.write(
        r.ok
          ? `${what}: ok: ${facts}\n`
          : `${what}${r.fault!.line !== undefined ? ` record ${r.fault!.line}` : ""}: ${r.fault!.message} (${facts})\n`,
      );
    }
    for (const c of report.checkpointFaults)
      process.stdout.write(`checkpoint of run ${c.run_id} at ${c.lines} lines: ${c.message}\n`);
    const failed = report.runs.filter((r) => !r.ok).length;
    process.stdout.write(
      `${report.runs.length} runs in ${store.where}: ${report.runs.length - failed} ok, ${failed} failed; ${exported.length} exported checkpoints read${report.checkpointFaults.length ? `; ${report.checkpointFaults.length} bad checkpoints` : ""}\n`,
    );
  } finally {
    await store.close();
  }
}

export function registerLog(program: Command): void {
  const log = program.command("log").description("work with policy logs");
  log
    .command("verify")
    .description(
      "verify policy logs: each run's chain, sequence, hashes, outcomes, and the head kept in the state dir; and which runs retention removed",
    )
    .argument("[paths...]", "log files or folders of them (default: the state dir's logs/)")
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .option("--no-head", "a log with no head kept in the state dir is not a fault (its chain alone is checked)")
    .option(
      "--state <url>",
      "a fleet's PostgreSQL (postgres://…): verify every instance's copy of its log there, and every signed checkpoint (default: LATCH_STATE_URL)",
    )
    .option(
      "--checkpoints <file>",
      "with --state: an instance's exported checkpoints (its state dir's checkpoints.jsonl); their keys are trusted (repeatable; default: this state dir's)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--json", "print JSON")
    .action(async (paths: string[], flags: VerifyFlags) => {
      const stateDir = flags.stateDir ?? defaultStateDir();
      const url = stateUrlOf(flags.state);
      if (url !== undefined) return verifyFleetCommand(url, stateDir, flags);
      const { files, folders } = expand(paths.length ? paths : [path.join(stateDir, "logs")]);
      const { heads, note } = openHeads(stateDir);
      try {
        const runs = files.map((f) => verifyRunFile(f, heads, flags.head));
        const gone = folders.map((dir) => ({ dir, ...(heads ? goneRuns(dir, heads) : { pruned: [], missing: [] }) }));
        const failed = runs.filter((r) => !r.ok).length;
        const pruned = gone.reduce((n, g) => n + g.pruned.length, 0);
        const missing = gone.reduce((n, g) => n + g.missing.length, 0);
        if (failed || missing || runs.length === 0) process.exitCode = 1;
        if (flags.json) return printJson({ ok: process.exitCode !== 1, runs, gone });
        if (note) process.stdout.write(`latch: ${note}\n`);
        if (runs.length === 0)
          process.stdout.write(`latch: no policy log found in ${paths.join(", ") || folders[0]}\n`);
        for (const r of runs) process.stdout.write(verifyLine(r));
        for (const g of gone) process.stdout.write(goneLines(g.dir, g));
        process.stdout.write(
          `${runs.length} runs: ${runs.length - failed} ok, ${failed} failed; ${pruned} pruned by retention (heads kept)${missing ? `; ${missing} gone without retention` : ""}\n`,
        );
      } finally {
        heads?.close();
      }
    });
  log
    .command("list")
    .description("list the run logs in a folder (default: the state dir's logs/), oldest first, each verified")
    .argument("[dir]", "the folder")
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .option("--json", "print JSON")
    .action((dir: string | undefined, flags: { stateDir?: string; json?: boolean }) => {
      const stateDir = flags.stateDir ?? defaultStateDir();
      const folder = dir ?? path.join(stateDir, "logs");
      const { heads } = openHeads(stateDir);
      try {
        const runs = runLogFiles(folder).map((f) => verifyRunFile(f.file, heads, false));
        if (flags.json) return printJson(runs);
        if (runs.length === 0) return void process.stdout.write(`no run logs in ${folder}\n`);
        for (const r of runs) {
          const status = r.ok
            ? `ok, ${headWords(r)}`
            : !r.finished && r.fault?.line === r.records + 1
              ? "open or cut short"
              : `broken at record ${r.fault?.line ?? "?"}`;
          process.stdout.write(
            `${r.file}  ${span(r)}  session ${r.sessions.join(",") || "-"}  ${r.effects} calls  ${r.bytes} B  ${status}\n`,
          );
        }
      } finally {
        heads?.close();
      }
    });
  log
    .command("show")
    .description("the decisions of one run as a table: time, tool, decision, reason, the path or command")
    .argument("<run>", "a log file, or the name (or a unique part of it) of a run in the state dir's logs/")
    .option(
      "--state-dir <dir>",
      "the state dir whose logs/ to look in (default: LATCH_STATE_DIR, else the XDG state dir)",
    )
    .option("--json", "print JSON: one object per decision, with its outcome")
    .action((run: string, flags: { stateDir?: string; json?: boolean }) => {
      const file = findRun(run, path.join(flags.stateDir ?? defaultStateDir(), "logs"));
      const rows = decisions(readFileSync(file, "utf8"));
      if (flags.json) return printJson(rows);
      const table = rows.map((d) => [
        d.at ? d.at.slice(11, 23) : "-",
        d.tool,
        d.outcome ? `${d.decision} → ${d.outcome}` : d.decision,
        d.reason,
        d.target ?? "-",
      ]);
      const head = ["time", "tool", "decision", "reason", "path or command"];
      const widths = head.map((h, i) =>
        Math.min(
          i === 3 ? 60 : 40,
          table.reduce((w, r) => Math.max(w, r[i].length), h.length),
        ),
      );
      const fit = (s: string, w: number) => (s.length > w ? s.slice(0, w - 1) + "…" : s.padEnd(w));
      const line = (r: string[]) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : fit(c, widths[i])))
          .join("  ")
          .trimEnd();
      process.stdout.write(`${file}\n${line(head)}\n`);
      for (const r of table) process.stdout.write(line(r.map(visibleText)) + "\n");
      if (rows.length && rows.every((d) => d.target === undefined))
        process.stdout.write(
          "(paths and commands are in the log only with --policy-evidence; without it, only their hashes)\n",
        );
    });
  log
    .command("unseal")
    .description(
      "print the results a run kept sealed (--policy-evidence-seal): what the disclosure gate redacted or withheld, opened with the operator's private key",
    )
    .argument("<run>", "a log file, or the name (or a unique part of it) of a run in the state dir's logs/")
    .requiredOption("--key <private-key.pem>", "the X25519 private key whose public half the run sealed to")
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .action((run: string, flags: { key: string; stateDir?: string }) => {
      const file = findRun(run, path.join(flags.stateDir ?? defaultStateDir(), "logs"));
      const key = loadUnsealKey(flags.key);
      let n = 0;
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (!line.includes('"sealed_raw"')) continue;
        const r = (JSON.parse(line) as { record: { effect_id: number; sealed_raw?: Sealed } }).record;
        if (!r.sealed_raw) continue;
        let result: unknown;
        try {
          result = unseal(key, r.sealed_raw);
        } catch (err) {
          throw new UsageError(`The sealed result of effect ${r.effect_id} in ${file}: ${(err as Error).message}.`);
        }
        process.stdout.write(JSON.stringify({ effect_id: r.effect_id, result }) + "\n");
        n++;
      }
      if (n === 0) process.stderr.write(`${file} holds no sealed result (was it run with --policy-evidence-seal?)\n`);
    });
}

/** A path, else a run in the logs folder by name or a unique part of its name. */
function findRun(run: string, logs: string): string {
  if (existsSync(run) && statSync(run).isFile()) return run;
  const names = runLogFiles(logs).map((f) => path.basename(f.file));
  const hits = names.filter((n) => n === run || n.includes(run));
  if (hits.length === 1) return path.join(logs, hits[0]);
  if (hits.length === 0)
    throw new UsageError(
      `No run log \`${run}\` (no such file, and no run in ${logs} has it in its name). See \`latch log list\`.`,
    );
  throw new UsageError(
    `\`${run}\` names ${hits.length} runs in ${logs} (${hits.slice(0, 3).join(", ")}${hits.length > 3 ? ", …" : ""}); give more of the name.`,
  );
}

interface DecisionRow {
  effect_id: number;
  at?: string;
  tool: string;
  session: string;
  decision: string;
  reason: string;
  gates: unknown;
  target?: string;
  outcome?: string;
}

/** The log's decisions with their outcomes (a damaged line is skipped here: verify names it). */
function decisions(text: string): DecisionRow[] {
  const rows = new Map<number, DecisionRow>();
  for (const line of text.split("\n")) {
    let rec: Record<string, unknown>;
    try {
      rec = (JSON.parse(line) as { record: Record<string, unknown> }).record;
    } catch {
      continue;
    }
    if (typeof rec !== "object" || rec === null) continue;
    const id = Number(rec.effect_id);
    if (rec.type === "effect_decision") {
      const target = targetOf(rec.request);
      rows.set(id, {
        effect_id: id,
        ...(typeof rec.at === "string" ? { at: rec.at } : {}),
        tool: String(rec.tool),
        session: String(rec.session),
        decision: String(rec.final),
        reason: String(rec.reason),
        gates: rec.gates,
        ...(target !== undefined ? { target } : {}),
      });
    } else if (rec.type === "effect_outcome" && rows.has(id)) {
      rows.get(id)!.outcome = String(rec.status);
    }
  }
  return [...rows.values()];
}

/** What a call touched, from its request (kept with --policy-evidence only). */
function targetOf(request: unknown): string | undefined {
  if (typeof request !== "object" || request === null) return undefined;
  const r = request as Record<string, unknown>;
  const str = (k: string) => (typeof r[k] === "string" ? r[k] : undefined);
  if (str("from") && str("to")) return `${str("from")} → ${str("to")}`;
  const one = str("command") ?? str("path") ?? str("url") ?? str("query") ?? str("pattern");
  if (one !== undefined) return one;
  const patch = str("patch");
  return patch ? (/^\*\*\* \w+ File: (.+)$/m.exec(patch)?.[1] ?? "(patch)") : undefined;
}
