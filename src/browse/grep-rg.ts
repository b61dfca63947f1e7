// The ripgrep engine: the @vscode/ripgrep binary, spawned with argv (never a shell), read as a
// stream of --json events. rg is stopped once the collector has enough, or when the call aborts,
// and we wait for it to exit either way, so no rg outlives its call.
import { Termination } from "../process/termination.js";
import { existsSync } from "node:fs";
import path from "node:path";
import { cancelled, ToolError } from "../errors.js";
import { bytesToInternal } from "../fs/names.js";
import type { Visibility } from "../policy/visibility.js";
import { FileBuilder, stripEol, type FileHits, type GrepCollector, type GrepQuery } from "./grep-collect.js";
import { emitGroups, groupSpans, lineStarts, type Span } from "./grep-multiline.js";
import { spawnRg } from "./rg-log.js";

/** The fields latch reads of rg's --json events (begin, match, context; the end event is read as text). */
interface RgEvent {
  type: string;
  data: {
    path?: RgText;
    lines?: RgText;
    line_number: number;
    submatches?: { start: number; end: number }[];
  };
}

export interface EngineRun {
  root: string;
  /** The file or folder searched, resolved inside the root. */
  target: { abs: string; rel: string; isFile: boolean };
  query: GrepQuery;
  collector: GrepCollector;
  /**
   * Whether a file's hits may be shown (control plane, denied, links; for rg, confirmed through
   * descriptors: confirm.ts); a sync answer is applied at once.
   */
  visible(hits: FileHits, binary: boolean): boolean | Promise<boolean>;
  /** Authoritative include filter on the path relative to the searched folder. */
  includes(relToTarget: string): boolean;
  /** The one visibility rule (the JS engine's walk applies it to each entry). */
  visibility: Visibility;
  /** The rule as rg `-g` exclusions (rg's engine): hidden entries are neither searched nor listed. */
  excludes: readonly string[];
  signal: AbortSignal;
  /** Called once the engine is searching (for rg: once it is spawned). */
  onStart(): void;
  /** rg: called as each piece of its output arrives, before the files it tells of are judged. */
  onOutput?(): void;
  progress(files: number): void;
  /** rg: walk in path order (single-threaded), so a capped search keeps the first matches by path. */
  sortByPath?: boolean;
}

let cachedRgPath: string | null | undefined;

/** The rg binary, or null when the package or its binary is missing. */
export async function findRg(): Promise<string | null> {
  if (cachedRgPath !== undefined) return cachedRgPath;
  try {
    const { rgPath } = await import("@vscode/ripgrep");
    cachedRgPath = existsSync(rgPath) ? rgPath : null;
  } catch {
    cachedRgPath = null; // the optional binary package is absent: the JS engine takes over
  }
  return cachedRgPath;
}

/** A basename glob that rg's --type-add can carry (it filters without overriding .gitignore, unlike -g). */
function typeGlob(include: string | undefined): string | undefined {
  if (include === undefined || include.includes("/") || include.includes(",") || include.includes(":"))
    return undefined;
  return include;
}

/**
 * How rg walks for grep: .gitignore files only, as the walk reads them (no .ignore/.rgignore, no
 * global or .git/info excludes), hidden files too, links not followed (rg's default), .git and
 * node_modules skipped.
 */
export const RG_WALK_FLAGS: readonly string[] = [
  "--no-config",
  "--no-require-git",
  "--no-ignore-dot",
  "--no-ignore-exclude",
  "--no-ignore-global",
  "--hidden",
  "--no-messages",
  "-g",
  "!.git",
  "-g",
  "!node_modules",
];

/**
 * The visibility rule's exclusions for rg: hidden entries are neither searched nor listed. They are
 * not counted from rg's `--debug` lines: rg walks by name, so a folder swapped for a link to outside
 * while it runs would count secret-named entries there (review g60); latch's own walk counts them
 * (steady-tree.ts).
 */
export function excludeArgs(excludes: readonly string[]): string[] {
  return excludes.flatMap((g) => ["-g", g]);
}

/** rg's stderr, kept bounded for the error it may explain. */
function stderrReader(): { push(d: string): void; text(): string } {
  let kept = "";
  return {
    push(d) {
      if (kept.length < 4096) kept += d.slice(0, 4096 - kept.length);
    },
    text: () => kept,
  };
}

export function rgArgs(
  q: GrepQuery,
  searchPath: string,
  excludes: readonly string[] = [],
  sortByPath = false,
): string[] {
  const args = ["--json", "--binary", ...RG_WALK_FLAGS, ...excludeArgs(excludes)];
  if (sortByPath) args.push("--sort", "path");
  if (!q.regex) args.push("--fixed-strings");
  if (q.multiline) args.push("--multiline");
  args.push(q.caseSensitive ? "--case-sensitive" : "--ignore-case");
  if (q.context > 0) args.push("--context", String(q.context));
  const t = typeGlob(q.include);
  if (t !== undefined) args.push("--type-add", `latchinclude:${t}`, "--type", "latchinclude");
  args.push("--regexp", q.pattern, "--", searchPath);
  return args;
}

/**
 * rg's end-of-file event, as it starts (serde writes `type` first), and its binary_offset when it is a
 * number: a quote inside a JSON string is always escaped, so the first `"binary_offset":` is the key.
 */
const END_EVENT = '{"type":"end",';
const BINARY = /"binary_offset":\d/;

interface RgText {
  text?: string;
  bytes?: string;
}

function decode(t: RgText | undefined): string {
  if (!t) return "";
  return t.text ?? Buffer.from(t.bytes ?? "", "base64").toString("utf8");
}

/** A path from rg: `bytes` when the name is not UTF-8, kept as latch holds such names (src/fs/names.ts). */
function decodePath(t: RgText | undefined): string {
  if (t?.text !== undefined) return t.text;
  return bytesToInternal(Buffer.from(t?.bytes ?? "", "base64"));
}

/** rg gives byte offsets; the listing works in characters. */
function charCol(line: string, byteOffset: number): number {
  if (Buffer.byteLength(line) === line.length) return byteOffset;
  return Buffer.from(line).subarray(0, byteOffset).toString("utf8").length;
}

export async function runRg(rgPath: string, run: EngineRun): Promise<void> {
  const { target, query, collector } = run;
  const cwd = target.isFile ? path.dirname(target.abs) : target.abs;
  const cwdRel = target.isFile ? parentRel(target.rel) : target.rel;
  const searchPath = target.isFile ? "./" + path.basename(target.abs) : "./";
  const { child, stdout, log } = spawnRg(
    rgPath,
    rgArgs(query, searchPath, target.isFile ? [] : run.excludes, run.sortByPath),
    cwd,
  );
  let spawnError: Error | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once("close", (code) => resolve(code));
    child.once("error", (err) => {
      spawnError = err;
      resolve(null);
    });
  });
  // One process, stopped at once (SIGKILL, no grace): on the caller's abort or when enough is found.
  const rg = new Termination({ kill: (sig) => child.kill(sig), graceMs: 0, signal: run.signal });
  run.onStart();
  let files = 0;
  // rg reports only matches, so a long search with few of them still shows life once a second.
  const ticker = setInterval(() => run.progress(files), 1000);
  let streamed = false;
  let applied: Promise<void> = Promise.resolve();
  let pending = 0;
  try {
    let builder: FileBuilder | undefined;
    // A line can be huge (a 50 MB one-line file): keep its chunks apart and join them only once.
    let pieces: string[] = [];
    stdout.setEncoding("utf8");
    outer: for await (const chunk of stdout as AsyncIterable<string>) {
      if (rg.stopped) break;
      run.onOutput?.();
      let from = 0;
      let nl: number;
      while ((nl = chunk.indexOf("\n", from)) !== -1) {
        pieces.push(chunk.slice(from, nl));
        const line = pieces.length === 1 ? pieces[0] : pieces.join("");
        pieces = [];
        from = nl + 1;
        if (line.startsWith(END_EVENT)) {
          // The end of a file: only its binary_offset is read, so its stats are not parsed.
          if (!builder) continue;
          const hits = builder.finish();
          builder = undefined;
          if (hits.matches === 0) continue;
          const binary = BINARY.test(line);
          const apply = (shown: boolean) => {
            if (!shown || rg.stopped) return;
            if (binary) collector.binarySkipped++;
            else collector.add(hits);
            if (++files % 200 === 0) run.progress(files);
            if (collector.enough()) {
              collector.stopped = true;
              rg.stop("limit");
            }
          };
          const shown = run.visible(hits, binary);
          if (typeof shown === "boolean" && pending === 0) apply(shown);
          else {
            // An asynchronous check: verdicts are applied in arrival order, so later ones queue behind it.
            pending++;
            applied = applied.then(async () => {
              const ok = await shown;
              pending--;
              apply(ok);
            });
            applied.catch(() => undefined); // a failure surfaces at `await applied` below, not as an unhandled rejection
          }
          if (collector.enough()) break outer;
          continue;
        }
        const ev = JSON.parse(line) as RgEvent;
        if (ev.type === "begin") {
          const relToCwd = decodePath(ev.data.path).replace(/^\.\//, "");
          const relToTarget = target.isFile ? path.basename(target.abs) : relToCwd;
          builder =
            target.isFile || run.includes(relToTarget)
              ? new FileBuilder(
                  cwdRel === "." ? relToCwd : `${cwdRel}/${relToCwd}`,
                  collector.room(),
                  query.context,
                  query,
                )
              : undefined;
        } else if (ev.type === "match" && builder && query.multiline) {
          rgMultilineMatch(builder, ev.data.lines, ev.data.line_number, ev.data.submatches ?? []);
        } else if (ev.type === "match" && builder) {
          const text = stripEol(decode(ev.data.lines));
          builder.match(ev.data.line_number, text, charCol(text, ev.data.submatches?.[0]?.start ?? 0));
        } else if (ev.type === "context" && builder) {
          builder.contextLine(ev.data.line_number, stripEol(decode(ev.data.lines)));
        }
      }
      if (from < chunk.length) pieces.push(chunk.slice(from));
    }
    await applied;
    streamed = true;
  } finally {
    clearInterval(ticker);
    rg.dispose();
    stdout.destroy();
    if (!streamed) {
      rg.stop("exit"); // an exception above: rg must not outlive the call
      await exited;
      log.close();
    }
  }
  const code = await exited;
  const errs = stderrReader();
  try {
    log.drain((d) => errs.push(d));
  } finally {
    log.close();
  }
  const stderr = errs.text();
  if (run.signal.aborted) throw cancelled();
  if (spawnError) throw rgSpawnError(spawnError, rgPath);
  if (!rg.stopped && code === 2 && /regex|parse error/i.test(stderr)) {
    throw new ToolError(
      "EINVAL",
      `Expected \`pattern\` to be a valid regular expression, got \`${query.pattern}\`: ${stderr.trim().split("\n").slice(0, 6).join(" ")}`,
    );
  }
}

/**
 * Why rg did not start. ENOENT with the binary in place is its working folder gone: moved, removed, or
 * swapped for a link (which spawn's chdir may not follow into anyway) since the walk checked it.
 */
function rgSpawnError(err: Error, rgPath: string): ToolError {
  if ((err as { code?: string }).code === "ENOENT" && existsSync(rgPath))
    return new ToolError(
      "ENOENT",
      "The folder to search was moved or removed (or replaced) while ripgrep started in it; nothing was read. Check it with list_dir, then retry.",
    );
  return new ToolError(
    "EENGINE",
    `ripgrep could not be started (${err.message}); set LATCH_GREP_ENGINE=js to search without it.`,
  );
}

/** A multiline match event: rg joins matches on adjacent lines into one; split them by the lines they share. */
function rgMultilineMatch(builder: FileBuilder, lines: RgText | undefined, first: number, subs: Span[]): void {
  const block = lines?.text !== undefined ? Buffer.from(lines.text, "utf8") : Buffer.from(lines?.bytes ?? "", "base64");
  const starts = lineStarts(block);
  // No submatch (rg found none again inside the lines it reported): the lines are one match.
  const spans = subs.length > 0 ? subs : [{ start: 0, end: block.length }];
  emitGroups(block, groupSpans(block, starts, spans, first), 0, builder);
}

function parentRel(rel: string): string {
  const i = rel.lastIndexOf("/");
  return i === -1 ? "." : rel.slice(0, i);
}
