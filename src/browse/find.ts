// find_files: candidates from `rg --files` (default) or the in-process walk (LATCH_GREP_ENGINE=js, or
// no rg binary), filtered by the glob, checked like every found entry, sorted, capped.
import { hasEscapedBytes } from "../fs/names.js";
import { listFilesRg } from "./find-rg.js";
import { isInsideIgnored } from "./gitignore.js";
import { literalTail, makeGlob } from "./glob.js";
import { chooseEngine, type Engine } from "./grep.js";
import type { Visibility } from "../policy/visibility.js";
import { BeneathLookup, STEADY_MARGIN_MS } from "./confirm.js";
import { makeDirCheck, makeFoundCheck, makeRuleCheck, type Resolve } from "./visible.js";
import { comparePaths, walk } from "./walk.js";

export interface FindRequest {
  root: string;
  start: { abs: string; rel: string };
  pattern: string;
  max: number;
  /** The one visibility rule: hidden files are neither listed nor counted by name, only in `hidden`. */
  visibility: Visibility;
  resolve: Resolve;
  signal: AbortSignal;
  onProgress: (seen: number) => void;
  /** LATCH_GREP_ENGINE from the startup environment: "js" walks in-process. */
  engineChoice?: string;
}

export interface FindAnswer {
  matches: string[];
  count: number;
  truncated: boolean;
  /** Entries the visibility rule left out (a hidden folder counts once). */
  hidden: number;
  engine: Engine;
}

export async function findFiles(req: FindRequest): Promise<FindAnswer> {
  const glob = makeGlob(req.pattern);
  const prefix = req.start.rel === "." ? "" : req.start.rel + "/";
  const candidates: string[] = [];
  // rg is spawned in the folder, and a spawn's cwd is a string: a folder whose name is not UTF-8 is walked.
  const chosen = hasEscapedBytes(req.start.abs) ? { engine: "js" as const } : await chooseEngine(req.engineChoice);
  // rg must be told what to leave out; a rule it cannot be told (rare globs) sends the call to the walk.
  const excludes = chosen.engine === "rg" ? req.visibility.rgExcludes(req.start.rel) : [];
  const { engine, rgPath } = excludes === undefined ? { engine: "js" as const, rgPath: undefined } : chosen;
  const counts = { seen: 0, ignored: 0, hidden: 0 };
  const started = Date.now();
  if (engine === "rg") {
    // A folder inside a gitignored one is never entered by the walk; rg, which would list it, is not asked.
    if (!(await isInsideIgnored(req.root, req.start.rel))) {
      await listFilesRg(
        rgPath!,
        req.start.abs,
        req.signal,
        (rel) => glob(rel) && candidates.push(prefix + rel),
        req.onProgress,
        excludes,
        () => counts.hidden++,
        literalTail(req.pattern.replace(/^\.\//, "")),
      );
    }
  } else {
    const walker = walk(
      {
        root: req.root,
        start: req.start,
        visibility: req.visibility,
        allowDir: makeDirCheck(req.resolve),
        signal: req.signal,
        onProgress: req.onProgress,
      },
      counts,
    );
    for await (const e of walker) {
      if (e.kind === "file" && glob(e.rel.slice(prefix.length))) candidates.push(e.rel);
    }
  }
  // Every match is checked again (the visibility rule on it and its folders, links); the check is synchronous.
  // rg listed names by path: each is confirmed a file inside the root now, through descriptors
  // (confirm.ts), so a folder swapped for a link to outside while rg listed it shows no outside name.
  // That lookup's lstat (a link is no file) is the found check's own: the rule is all it adds. Where
  // nothing on a name's way changed since before rg started, rg's listing is the lookup (listedFile).
  // Sorted first, so each folder is opened once and its parent is still held (and the answer stays sorted).
  candidates.sort(comparePaths);
  const found: string[] = [];
  if (engine === "rg") {
    const shown = makeRuleCheck(req.visibility);
    const lookup = new BeneathLookup(req.root, started - STEADY_MARGIN_MS);
    try {
      for (const rel of candidates) if (shown(rel) && lookup.listedFile(rel)) found.push(rel);
    } finally {
      lookup.close();
    }
  } else {
    const visible = makeFoundCheck(req.root, req.visibility);
    for (const rel of candidates) if (visible(rel) !== undefined) found.push(rel);
  }
  return {
    matches: found.slice(0, req.max),
    count: found.length,
    truncated: found.length > req.max,
    hidden: counts.hidden,
    engine,
  };
}
