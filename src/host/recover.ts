// What a latch run leaves when it is killed (SIGKILL, a crash): temp files beside the files it was
// writing, lock folders in the state dir, and processes it started that did not die with it (an
// uncontained shell child; a contained one dies with latch through bwrap's --die-with-parent). Each
// `latch mcp` keeps a record of itself in the state dir, `runs/PLACE-PID-START`, listing each temp
// file before it is created; the next start finds the records of dead runs of this place and removes
// what they left: the listed temp files still there, the locks of dead owners, and the processes that
// carry a dead run's mark (LATCH_RUN=PID-…, src/process/procs.ts) and started after it. A clean exit
// does the same for itself, for calls that did not end in time, and removes its record.
import {
  closeSync,
  constants,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { RUN_MARK_VAR } from "../process/procs.js";
import { tempWatch } from "../fs/temp-names.js";
import { osPath } from "../fs/names.js";
import { breakIfStale, dropOwnerFile, ownerAlive, readOwner, removeLock, sweepGone } from "../fs/lock.js";
import { PLACE, STARTED, pidAlive, startTime } from "../fs/owner.js";
import type { StateDir } from "../fs/state.js";

/** The record is rewritten with only the live temp files once it grows past this. */
const COMPACT_BYTES = 1 << 20;

interface Recovered {
  runs: number;
  processes: number;
  temps: number;
  locks: number;
}

export interface RunRecord {
  /** What the dead runs found at start had left, now removed. */
  recovered: Recovered;
  /** Remove what this run still has (temp files, locks, marked processes) and its record. */
  end(): void;
}

/** Clean up after dead runs, then keep a record of this one. */
export function startRun(state: StateDir): RunRecord {
  const dir = path.join(state.dir, "runs");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const recovered = recoverDeadRuns(dir, state.locks);
  const own = path.join(dir, `${PLACE}-${process.pid}-${STARTED}`);
  // Held open for appends: a line per temp file, written before the file is made (an open, a write and
  // a close by name cost every write ~35 µs more). Not synced: a crash of the machine takes the temp
  // files' names with their unsynced blocks.
  const fd = openSync(own, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND, 0o600);
  let bytes = 0;
  tempWatch.created = (tmp) => {
    try {
      if (bytes > COMPACT_BYTES) {
        ftruncateSync(fd, 0);
        writeSync(fd, [...tempWatch.live].map((t) => JSON.stringify(t) + "\n").join(""));
        bytes = 0;
      }
      const line = JSON.stringify(tmp) + "\n";
      writeSync(fd, line);
      bytes += line.length;
    } catch {
      // The record is a tidy-up aid: a state dir that refuses it must not fail the write itself.
    }
  };
  let ended = false;
  return {
    recovered,
    end() {
      if (ended) return;
      ended = true;
      tempWatch.created = undefined;
      for (const tmp of tempWatch.live) removeQuietly(tmp);
      removeLocks(state.locks, (owner) => owner.startsWith(`${PLACE} ${process.pid} ${STARTED} `));
      dropOwnerFile(state.locks);
      killMarked(process.pid, Number(STARTED) || 0, true);
      closeSync(fd);
      removeQuietly(own);
    },
  };
}

function recoverDeadRuns(dir: string, locks: string): Recovered {
  const out: Recovered = { runs: 0, processes: 0, temps: 0, locks: 0 };
  for (const name of readdirSync(dir)) {
    const m = /^([0-9a-f]{12})-(\d+)-(\d+|\?)$/.exec(name);
    if (!m || m[1] !== PLACE) continue; // another machine, boot or pid namespace: not ours to judge
    const pid = Number(m[2]);
    if (pidAlive(pid, m[3])) continue;
    out.runs++;
    out.processes += killMarked(pid, Number(m[3]) || 0, false);
    for (const tmp of listedTemps(path.join(dir, name)))
      if (path.basename(tmp).includes(`.latch-${pid}-`) && removeQuietly(tmp)) out.temps++;
    removeQuietly(path.join(dir, name));
  }
  out.locks = removeLocks(locks, (owner) => ownerAlive(owner) === false);
  return out;
}

function listedTemps(record: string): string[] {
  let text: string;
  try {
    text = readFileSync(record, "utf8");
  } catch {
    return []; // removed meanwhile by another latch starting at the same time
  }
  return text
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [String(JSON.parse(l))];
      } catch {
        return []; // a line cut by the kill
      }
    });
}

/** Remove the locks whose owner line `dead` accepts; lock.ts's breaker protocol, so a live taker is safe. */
function removeLocks(locks: string, dead: (owner: string) => boolean): number {
  let n = 0;
  let names: string[];
  try {
    names = readdirSync(locks);
  } catch {
    return 0;
  }
  sweepGone(locks, names);
  for (const name of names) {
    if (!name.endsWith(".lock")) continue;
    const lock = path.join(locks, name);
    let owner: string | undefined;
    try {
      owner = readOwner(lock);
    } catch {
      continue; // unreadable: left as it is
    }
    if (owner === undefined) continue; // ownerless: lock.ts takes it over once it is old enough
    if (!dead(owner)) continue;
    if (ownerAlive(owner) === false ? breakIfStale(lock) : removeOwn(lock, owner)) n++;
  }
  return n;
}

/** This process's own lock, at exit: it is the holder, so no other process may have taken it. */
function removeOwn(lock: string, owner: string): boolean {
  try {
    if (readOwner(lock) !== owner) return false;
    removeLock(lock);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILL the processes marked by run `pid` that started after it (`since`, clock ticks since boot).
 * When that pid now belongs to a new process, only those older than it can be the dead run's.
 */
function killMarked(pid: number, since: number, self: boolean): number {
  if (process.platform !== "linux") return 0;
  const prefix = `\0${RUN_MARK_VAR}=${pid}-`;
  const reusedAt = self ? undefined : Number(startTime(pid) ?? NaN);
  let n = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const started = Number(startTime(Number(name)) ?? NaN);
    if (!(started >= since) || (reusedAt !== undefined && !(started < reusedAt || Number.isNaN(reusedAt)))) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${name}/environ`, "latin1");
    } catch {
      continue; // gone, or another user's
    }
    if (!`\0${env}`.includes(prefix)) continue;
    try {
      process.kill(Number(name), "SIGKILL");
      n++;
    } catch (err) {
      if (errnoCode(err) !== "ESRCH") throw err;
    }
  }
  return n;
}

/** Remove a file by its internal name (a temp file's may hold escaped non-UTF-8 bytes). */
function removeQuietly(p: string): boolean {
  try {
    unlinkSync(osPath(p));
    return true;
  } catch {
    return false; // gone already
  }
}
