// find_files's candidates from `rg --files`: rg walks the folder with grep's rg-engine rules (no
// checks), and every name it lists goes through the same filters as the walk's entries (the glob,
// the visibility rule, the lookup of confirm.ts). rg is spawned with argv, killed when the call
// aborts, and waited for either way.
import { isUtf8 } from "node:buffer";
import { availableParallelism } from "node:os";
import { cancelled } from "../errors.js";
import { bytesToInternal } from "../fs/names.js";
import { excludeArgs, RG_WALK_FLAGS, rgSpawnError, stderrReader } from "./grep-rg.js";
import { spawnRg } from "./rg-log.js";

const PROGRESS_EVERY = 2000;

/**
 * rg's threads: one core left to latch, which reads and filters the names as rg prints them. rg's
 * parallel listing funnels every name through one printer thread: on the bench corpus (50,100 names)
 * its own CPU fell from ~95 ms with two threads to ~60 ms with one (bench/RESULTS.md, find-files).
 */
const RG_THREADS = String(Math.max(1, availableParallelism() - 1));

/** Calls `onName` with each file rg lists under `cwd`, relative to it (slash path, no leading "./"). */
export async function listFilesRg(
  rgPath: string,
  cwd: string,
  signal: AbortSignal,
  onName: (rel: string) => void,
  onProgress: (seen: number) => void,
  /** The visibility rule as rg exclusions. */
  excludes: readonly string[] = [],
  /** Only names that end with this are passed on (glob.ts's literalTail): the others are never decoded one by one. */
  tail = "",
): Promise<void> {
  if (signal.aborted) throw cancelled();
  // NUL-separated, so a name with a newline stays one name.
  const { child, stdout, log } = spawnRg(
    rgPath,
    ["--files", "--null", "--threads", RG_THREADS, ...RG_WALK_FLAGS, ...excludeArgs(excludes), "--", "./"],
    cwd,
  );
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    child.once("error", (err) => {
      spawnError = err;
      resolve();
    });
  });
  const stop = () => child.kill("SIGKILL");
  signal.addEventListener("abort", stop, { once: true });
  let seen = 0;
  try {
    let rest: Buffer = Buffer.alloc(0);
    for await (const chunk of stdout as AsyncIterable<Buffer>) {
      const buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      // Up to the chunk's last NUL (a NUL byte is never inside a UTF-8 sequence).
      const last = buf.lastIndexOf(0);
      if (last === -1) {
        rest = buf;
        continue;
      }
      for (const name of namesOf(buf.subarray(0, last), tail)) {
        onName(name.startsWith("./") ? name.slice(2) : name);
        if (++seen % PROGRESS_EVERY === 0) onProgress(seen);
      }
      rest = buf.subarray(last + 1);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    if (!stdout.readableEnded) stop(); // an exception above: rg must not outlive the call
    stdout.destroy();
    await exited;
    const errs = stderrReader();
    try {
      log.drain((d) => errs.push(d));
    } finally {
      log.close();
    }
    errs.text();
  }
  if (signal.aborted) throw cancelled();
  // rg exits 1 when it lists nothing and 2 when some folder could not be read (the walk skips those too).
  if (spawnError) throw rgSpawnError(spawnError, rgPath, "walk");
}

/**
 * The NUL-separated names of `run` that end with `tail`: one decode for the whole run when it is valid
 * UTF-8 (nearly always), its names found by searching for `tail` + NUL, so a name that cannot match
 * costs no string of its own; else name by name.
 */
function namesOf(run: Buffer, tail: string): string[] {
  if (!isUtf8(run)) {
    const names: string[] = [];
    for (let at = 0; at <= run.length;) {
      const end = run.indexOf(0, at);
      const stop = end === -1 ? run.length : end;
      const name = bytesToInternal(run.subarray(at, stop));
      if (name.endsWith(tail)) names.push(name);
      at = stop + 1;
    }
    return names;
  }
  const text = run.toString("utf8");
  if (tail === "") return text.split("\0");
  const names: string[] = [];
  const key = tail + "\0";
  for (let at = text.indexOf(key); at !== -1; at = text.indexOf(key, at + key.length)) {
    names.push(text.slice(at === 0 ? 0 : text.lastIndexOf("\0", at - 1) + 1, at + tail.length));
  }
  if (text.endsWith(tail)) names.push(text.slice(text.lastIndexOf("\0") + 1)); // the last name has no NUL after it
  return names;
}
