// The process table as the tests read it, from /proc: living processes only (a zombie runs nothing),
// and those whose run mark names a given latch (src/process/procs.ts puts LATCH_RUN=<latch pid>-… in
// the environment of every process latch starts).
import { readdirSync, readFileSync } from "node:fs";
import { RUN_MARK_VAR } from "../../src/process/procs.js";

export interface Proc {
  pid: number;
  /** The command name, from /proc/PID/stat. */
  comm: string;
  argv: string[];
  /** The environment, NUL-separated, as /proc/PID/environ has it. */
  environ: string;
}

const state = (stat: string) => stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);

/**
 * Every living process this user may read; one that ends while it is read is left out. `wanted`: only
 * processes whose command name it accepts are read further (a poll that needs a few cheaply).
 */
export function livingProcesses(wanted: (comm: string) => boolean = () => true): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (state(stat) === "Z") continue;
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (!wanted(comm)) continue;
      out.push({
        pid: Number(name),
        comm,
        argv: readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0").slice(0, -1),
        environ: readFileSync(`/proc/${name}/environ`, "latin1"),
      });
    } catch {
      continue; // it ended while we looked, or is not ours to read
    }
  }
  return out;
}

/** Living processes started by the latch whose pid is `latch` (by default this test process's hosts). */
export function markedBy(latch = process.pid): Proc[] {
  return livingProcesses().filter((p) => `\0${p.environ}`.includes(`\0${RUN_MARK_VAR}=${latch}-`));
}

/** Whether `pid` is gone, or a zombie. */
export function ended(pid: number): boolean {
  try {
    return state(readFileSync(`/proc/${pid}/stat`, "utf8")) === "Z";
  } catch {
    return true;
  }
}
