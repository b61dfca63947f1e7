// grep's orchestration: pick the engine, run it into one collector, and shape the answer with the
// notes the model needs (caps reached, binary files skipped, how to narrow).
import { formatHits, GrepCollector, type FileHits, type GrepQuery } from "./grep-collect.js";
import { hasEscapedBytes, showName } from "../fs/names.js";
import { ToolError } from "../errors.js";
import { runJs } from "./grep-js.js";
import { findRg, runRg, type EngineRun } from "./grep-rg.js";
import { isInsideIgnored } from "./gitignore.js";
import { makeGlob } from "./glob.js";
import type { Visibility } from "../policy/visibility.js";
import { BeneathLookup, STEADY_MARGIN_MS } from "./confirm.js";
import type { FolderIndex } from "./find-index.js";
import { changedFolder, judgeTree, type SetAside } from "./steady-tree.js";
import { makeDirCheck, makeFoundCheck, type Resolve } from "./visible.js";

type Engine = "rg" | "js";

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
  /** The host's folder index: the walk after rg judges its answer and counts what the rule hid (steady-tree.ts). */
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
async function chooseEngine(choice: string | undefined): Promise<{ engine: Engine; rgPath?: string }> {
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
  // Made before rg starts: rg's answer stands only from folders unchanged since (confirm.ts, steady-tree.ts).
  const since = Date.now() - STEADY_MARGIN_MS;
  const lookup = engine === "rg" ? new BeneathLookup(req.root, since) : undefined;
  const include = req.query.include === undefined ? () => true : makeGlob(req.query.include);
  const run: EngineRun = {
    root: req.root,
    target: req.target,
    query: req.query,
    collector,
    // rg opened what it reports by name: each file is confirmed through descriptors (confirm.ts). The
    // JS engine read every file through its walked folder's descriptor already. A file from a folder
    // that changed is dropped, and no more: whether rg named it may hang on what it read elsewhere, so
    // only the walk after rg, which sees the same change, may set rg's answer aside (a choice made on
    // rg's word would tell of it: the JS engine reads some patterns otherwise, review g62).
    visible: (hits, binary) =>
      visibility(hits.path) !== undefined && (lookup?.confirm(hits, binary) ?? "shown") === "shown",
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
  let answeredBy: Engine = engine;
  try {
    if (ignoredFolder) run.onStart();
    else if (engine === "rg") {
      // The folder searched (a file's folder) and those above it: changed already, rg's answer could not
      // stand, so it is not asked.
      const top = req.target.isFile ? parentOf(req.target.rel) : req.target.rel;
      let setAside = lookup!.steadyFolder(top) ? undefined : changedFolder(top);
      if (setAside === undefined) {
        await runRg(rgPath!, run);
        // rg searches in parallel, so which matches fill the cap depends on timing. A search that ran to
        // the end kept the first N by path (the collector's path order); one stopped early (enough counted
        // past the cap) may not have seen them: search again walking in path order, as the JS engine does.
        if (collector.stopped && !req.signal.aborted) {
          collector = new GrepCollector(req.maxMatches, req.query.context);
          await runRg(rgPath!, { ...run, collector, sortByPath: true });
        }
        // The tree walked by descriptors now that rg is done: what the rule hid is counted, and rg's
        // answer stands only if nothing in the tree changed while it ran (steady-tree.ts).
        lookup!.forgetSteady();
        const judged = req.target.isFile
          ? { hidden: 0, setAside: lookup!.steadyFolder(top) ? undefined : changedFolder(top) }
          : await judgeTree({ ...req, start: req.target }, since);
        setAside = judged.setAside;
        collector.hidden = judged.hidden;
      }
      if (setAside !== undefined) {
        collector = new GrepCollector(req.maxMatches, req.query.context);
        // The JS engine read every file through its walked folder's descriptor: the rule alone applies.
        const visible = (hits: FileHits) => visibility(hits.path) !== undefined;
        await searchAgain({ ...run, collector, visible, onOutput: undefined }, req, setAside);
        answeredBy = "js";
      }
    } else await runJs(run, makeDirCheck(req.resolve));
  } finally {
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
  if (notes.length) result.note = notes.join(" ");
  return { result, engine: answeredBy, files: collector.files };
}

/**
 * The search by the JS engine, through latch's own walk by descriptors, for a tree whose answer from
 * rg could not stand (`setAside` says why): what rg read by name there may have been elsewhere.
 */
async function searchAgain(run: EngineRun, req: GrepRequest, setAside: SetAside): Promise<void> {
  try {
    await runJs(run, makeDirCheck(req.resolve));
  } catch (err) {
    if (!(err instanceof ToolError) || err.code !== "EINVAL") throw err;
    throw new ToolError(
      "EINVAL",
      `${setAside.said}, so latch searched without ripgrep, and JavaScript cannot read \`pattern\` (${err.message}). ${setAside.fix}, or write the pattern so JavaScript reads it too (for case, use case_sensitive rather than an inline flag such as \`(?i)\`).`,
    );
  }
}

function parentOf(rel: string): string {
  const i = rel.lastIndexOf("/");
  return i === -1 ? "." : rel.slice(0, i);
}
