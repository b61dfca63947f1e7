// grep's orchestration: pick the engine, run it into one collector, and shape the answer with the
// notes the model needs (caps reached, binary files skipped, how to narrow).
import { formatHits, GrepCollector, type FileHits, type GrepQuery } from "./grep-collect.js";
import { hasEscapedBytes, showName } from "../fs/names.js";
import { runJs } from "./grep-js.js";
import { findRg, runRg, type EngineRun } from "./grep-rg.js";
import { isInsideIgnored } from "./gitignore.js";
import { makeGlob } from "./glob.js";
import type { Visibility } from "../policy/visibility.js";
import { BeneathLookup, STEADY_MARGIN_MS } from "./confirm.js";
import { Recount } from "./grep-recount.js";
import type { FolderIndex } from "./find-index.js";
import { countHidden } from "./hidden-count.js";
import { makeDirCheck, makeFoundCheck, type Resolve } from "./visible.js";

export type Engine = "rg" | "js";

export interface GrepRequest {
  root: string;
  target: { abs: string; rel: string; isFile: boolean };
  query: GrepQuery;
  maxMatches: number;
  maxOutputBytes: number;
  /** The one visibility rule: hidden files are neither searched nor named, only counted. */
  visibility: Visibility;
  resolve: Resolve;
  signal: AbortSignal;
  progress(p: { progress: number; message: string }): void;
  /** LATCH_GREP_ENGINE from the startup environment. */
  engineChoice?: string;
  /** The host's folder index, for the walk that counts what the rule hid beside rg (hidden-count.ts). */
  index?: FolderIndex;
  /** Keep the first matches in path order even when the cap is reached without the search stopping (grep's offset). */
  pathOrder?: boolean;
}

export interface GrepAnswer {
  result: Record<string, unknown>;
  engine: Engine;
  /** The files with the lines kept (up to the match cap), for grep's other output modes and offset. */
  files: FileHits[];
}

/** rg unless LATCH_GREP_ENGINE=js or the rg binary is missing. */
export async function chooseEngine(choice: string | undefined): Promise<{ engine: Engine; rgPath?: string }> {
  if (choice === "js") return { engine: "js" };
  const rgPath = await findRg();
  return rgPath ? { engine: "rg", rgPath } : { engine: "js" };
}

export async function grepTree(req: GrepRequest): Promise<GrepAnswer> {
  // rg takes its folder and file as strings: a target whose name is not UTF-8 is searched in-process.
  const chosen = hasEscapedBytes(req.target.abs) ? { engine: "js" as const } : await chooseEngine(req.engineChoice);
  // rg must be told what to leave out; a rule it cannot be told (rare globs) sends the call to the walk.
  const excludes = chosen.engine === "rg" ? req.visibility.rgExcludes(req.target.isFile ? "." : req.target.rel) : [];
  const { engine, rgPath } = excludes === undefined ? { engine: "js" as const, rgPath: undefined } : chosen;
  let collector = new GrepCollector(req.maxMatches, req.query.context, req.pathOrder === true && engine === "rg");
  const visibility = makeFoundCheck(req.root, req.visibility);
  // Made before rg starts: what rg tells without a line stands in folders unchanged since (confirm.ts).
  const lookup = engine === "rg" ? new BeneathLookup(req.root, Date.now() - STEADY_MARGIN_MS) : undefined;
  const recount = lookup && new Recount(req.query, lookup, req.signal);
  const include = req.query.include === undefined ? () => true : makeGlob(req.query.include);
  const run: EngineRun = {
    root: req.root,
    target: req.target,
    query: req.query,
    collector,
    // rg opened what it reports by name: each file is confirmed through descriptors (confirm.ts). The
    // JS engine read every file through its walked folder's descriptor already.
    visible: (hits, binary) => {
      if (visibility(hits.path) === undefined) return false;
      const verdict = lookup?.confirm(hits, binary) ?? "shown";
      return verdict === "recount" ? recount!.shown(hits, binary) : verdict === "shown";
    },
    onOutput: () => lookup?.forgetSteady(),
    includes: include,
    visibility: req.visibility,
    excludes: excludes ?? [],
    signal: req.signal,
    onStart: () =>
      req.progress({
        progress: 0,
        message: `searching ${showName(req.target.rel)} with ${engine === "rg" ? "ripgrep" : "the JS engine"}`,
      }),
    progress: (n) =>
      req.progress({
        progress: n,
        message: engine === "rg" ? `${n} files with matches so far` : `${n} files searched`,
      }),
  };
  const ignoredFolder = !req.target.isFile && (await isInsideIgnored(req.root, req.target.rel));
  try {
    if (ignoredFolder) run.onStart();
    else if (engine === "rg") {
      // What the rule left out is counted by latch's own walk, beside rg (hidden-count.ts); rg's
      // failure is the one told when both fail.
      const [searched, counted] = await Promise.allSettled([
        runRg(rgPath!, run),
        req.target.isFile ? 0 : countHidden({ ...req, start: req.target }),
      ]);
      if (searched.status === "rejected") throw searched.reason;
      if (counted.status === "rejected") throw counted.reason;
      const hidden = counted.value ?? 0;
      // rg searches in parallel, so which matches fill the cap depends on timing. A search that ran to
      // the end kept the first N by path (the collector's path order); one stopped early (enough counted
      // past the cap) may not have seen them: search again walking in path order, as the JS engine does.
      if (collector.stopped && !req.signal.aborted) {
        collector = new GrepCollector(req.maxMatches, req.query.context);
        await runRg(rgPath!, { ...run, collector, sortByPath: true });
      }
      collector.hidden = hidden;
    } else await runJs(run, makeDirCheck(req.resolve));
  } finally {
    recount?.close();
    lookup?.close();
  }

  const out = formatHits(
    collector.files,
    req.target.isFile,
    req.query.context,
    Math.max(1024, req.maxOutputBytes - 1024),
  );
  const result: Record<string, unknown> = {
    results: out.text,
    total_matches: collector.total,
    files_with_matches: collector.filesMatched,
    shown: out.shown,
  };
  if (collector.hidden > 0) result.hidden = collector.hidden;
  const notes: string[] = [];
  const narrow = `Narrow the search: a more specific pattern, a subfolder as path${req.target.isFile ? " or start_line/end_line" : ', or include (such as "*.ts")'}.`;
  if (collector.total > out.shown) {
    result.truncated = true;
    const more = collector.total - out.shown;
    const why = out.cutByBytes
      ? `the output limit (_max_output_bytes = ${req.maxOutputBytes}) was reached`
      : `the match cap (_max_grep_matches = ${req.maxMatches}) was reached`;
    notes.push(
      collector.stopped
        ? `Showing ${out.shown} matching lines; ${why}, and at least ${more} more matched before the search stopped counting. ${narrow}`
        : `Showing ${out.shown} of ${collector.total} matching lines; ${why}, and ${more} more matched. ${narrow}`,
    );
  } else if (ignoredFolder) {
    notes.push(
      `\`${showName(req.target.rel)}\` is in a gitignored folder, and grep skips gitignored files. Name a file in it as path to search that file.`,
    );
  } else if (collector.total === 0 && collector.binarySkipped === 0) {
    notes.push("No matches.");
  }
  if (collector.binarySkipped > 0) {
    result.binary_files_skipped = collector.binarySkipped;
    notes.push(
      `${collector.binarySkipped} binary file${collector.binarySkipped === 1 ? "" : "s"} matched and ${collector.binarySkipped === 1 ? "was" : "were"} skipped.`,
    );
  }
  if (recount && recount.unconfirmed > 0) {
    const n = recount.unconfirmed;
    result.unconfirmed_files = n;
    notes.push(
      `${n} file${n === 1 ? "" : "s"} that ripgrep found matching ${n === 1 ? "is" : "are"} left out of these counts: a folder on ${n === 1 ? "its" : "their"} way changed while it searched, and latch could not match ${n === 1 ? "it" : "them"} again itself (the pattern is one JavaScript rejects or runs too slowly). Retry in a few seconds to count ${n === 1 ? "it" : "them"}.`,
    );
  }
  if (notes.length) result.note = notes.join(" ");
  return { result, engine, files: collector.files };
}
