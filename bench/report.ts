// Shared by the benchmarks: statistics, the machine line, and writing one section of RESULTS.md
// without touching the others (each benchmark owns the block between its markers).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository, wherever a bench is run from. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RESULTS = path.join(REPO, "bench/RESULTS.md");

/** Every thread's time on a CPU so far of a running process (ns precision, Linux /proc), in ms. */
export function cpuOf(pid: number): number {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
  return ns / 1e6;
}

export function median(xs: number[]): number {
  return percentile(xs, 50);
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}

/** The tree a bench measures, for its rows: the commit, and "+ changes" when the code differs from it (RESULTS.md aside). */
export function thisTree(): string {
  const git = (...a: string[]) => execFileSync("git", a, { cwd: REPO, encoding: "utf8" }).trim();
  try {
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/RESULTS.md") ? " + changes" : ""}`;
  } catch {
    return "this tree";
  }
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  return `${os.cpus().length} cores (${cpu.trim()}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

/** Put `body` under `## title` between `<!-- key:begin -->` and `<!-- key:end -->`, adding the block if absent. */
export function replaceSection(file: string, key: string, title: string, body: string): void {
  const begin = `<!-- ${key}:begin -->`;
  const end = `<!-- ${key}:end -->`;
  const block = `${begin}\n## ${title}\n\n${body}\n${end}`;
  const text = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmark results\n";
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  const next =
    a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}

/** Samples the 1-minute load average every few seconds; `range()` says what it was while the bench ran. */
export function watchLoad(everyMs = 5000): { stop(): void; range(): string; max(): number } {
  const samples = [os.loadavg()[0]];
  const timer = setInterval(() => samples.push(os.loadavg()[0]), everyMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      samples.push(os.loadavg()[0]);
    },
    range: () =>
      `${Math.min(...samples).toFixed(1)}–${Math.max(...samples).toFixed(1)} (1-minute load average, sampled every ${everyMs / 1000} s)`,
    max: () => Math.max(...samples),
  };
}

/** How to read a run's rows: said from the load measured, not assumed (a busy machine makes them noisy). */
export function noiseNote(load: { max(): number }): string {
  const cores = os.cpus().length;
  return load.max() > cores
    ? `The machine was busy (load up to ${load.max().toFixed(1)} on ${cores} cores): absolute figures are noisy; compare rows of one run, not across runs.`
    : "Compare rows of one run, not across runs.";
}

/** A section's first line: when, on what, under which load, with which command. */
export function measuredLine(command: string, load: { range(): string }, extra = ""): string {
  return `Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${machine()}${extra}, load ${load.range()}, with \`${command}\`.`;
}

/** Print a bench's section and put it into bench/RESULTS.md, unless the command line says --no-write. */
export function publish(key: string, title: string, body: string): void {
  console.log(body);
  if (!process.argv.includes("--no-write")) replaceSection(RESULTS, key, title, body);
}

/**
 * Contained `echo hi` through each host's local_shell, taking turns so load hits all alike: the ms of
 * each call after `warmup` rounds, by host key. Any call that is not ok and contained stops the bench.
 */
export async function containedEchoTimes(
  hosts: Record<string, { call(tool: string, args: unknown): Promise<unknown> }>,
  calls: number,
  warmup: number,
): Promise<Record<string, number[]>> {
  const times: Record<string, number[]> = {};
  for (let i = 0; i < calls + warmup; i++) {
    for (const [key, h] of Object.entries(hosts)) {
      const t = performance.now();
      const out = (await h.call("local_shell", { command: "echo hi" })) as {
        status: string;
        result?: { contained?: boolean };
      };
      const ms = performance.now() - t;
      if (out.status !== "ok" || out.result?.contained !== true) throw new Error(`${key}: ${JSON.stringify(out)}`);
      if (i >= warmup) (times[key] ??= []).push(ms);
    }
  }
  return times;
}

/**
 * `--base DIR [--label NAME]`: another checkout to time beside this tree (a `git archive` of the
 * commit before), NAME in the table (default: DIR's name); `flags` repeats them for the command line.
 */
export function baseCheckout(): { base: string | undefined; label: string | undefined; flags: string } {
  const i = process.argv.indexOf("--base");
  const base = i > 0 ? path.resolve(process.argv[i + 1]) : undefined;
  const l = process.argv.indexOf("--label");
  const label = l > 0 ? process.argv[l + 1] : base && path.basename(base);
  return { base, label, flags: base ? ` --base ${base}${l > 0 ? ` --label ${label}` : ""}` : "" };
}

/**
 * A bench's numeric flags (`--name N`, each with its default) and the trees it compares (the rest of
 * the arguments, absolute; this checkout when none).
 */
export function flagsAndTrees<K extends string>(
  defaults: Record<K, number>,
  argv = process.argv.slice(2),
): { flags: Record<K, number>; trees: string[] } {
  const rest = [...argv];
  const flags = { ...defaults };
  for (const name of Object.keys(defaults) as K[]) {
    const at = rest.indexOf(`--${name}`);
    if (at !== -1) flags[name] = Number(rest.splice(at, 2)[1]);
  }
  return { flags, trees: (rest.length ? rest : [REPO]).map((r) => path.resolve(r)) };
}
