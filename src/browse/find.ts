// find_files: candidates from the in-process walk with the host's folder index (find-index.ts; the
// default), or from `rg --files` (LATCH_GREP_ENGINE=rg), filtered by the glob, checked like every
// found entry, sorted, capped.
import { hasEscapedBytes } from "../fs/names.js";
import { listFilesRg } from "./find-rg.js";
import { judgeTree } from "./steady-tree.js";
import { isInsideIgnored } from "./gitignore.js";
import { literalTail, makeGlob } from "./glob.js";
import { chooseEngine, type Engine } from "./grep.js";
import type { Visibility } from "../policy/visibility.js";
import { BeneathLookup, STEADY_MARGIN_MS } from "./confirm.js";
import { DeepIgnoreChain, walkIndexed, type FolderIndex } from "./find-index.js";
import { makeDirCheck, makeRuleCheck, type Resolve } from "./visible.js";
import { comparePaths } from "./walk.js";

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
  /** LATCH_GREP_ENGINE from the startup environment: "rg" lists through ripgrep; otherwise in-process. */
  engineChoice?: string;
  /** The host's folder index: what earlier walks found in folders that have not changed since. */
  index?: FolderIndex;
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
  // rg, unless ruled out (LATCH_GREP_ENGINE=js, or a folder whose name is not UTF-8: rg is spawned in
  // it, and a spawn's cwd is a string): asked for by name, or taking a tree the walk is not fit for.
  const rgPath =
    req.engineChoice === "js" || hasEscapedBytes(req.start.abs) ? undefined : (await chooseEngine(undefined)).rgPath;
  // rg must be told what to leave out; a rule it cannot be told (rare globs) keeps the call in-process.
  const viaRg = async (): Promise<FindAnswer | undefined> => {
    const excludes = rgPath ? req.visibility.rgExcludes(req.start.rel) : undefined;
    if (!excludes) return undefined;
    const listed = await listThroughRg(req, rgPath!, excludes, glob, prefix);
    return answer(req, listed, listed.byWalk ? "js" : "rg");
  };
  if (req.engineChoice === "rg") {
    const done = await viaRg();
    if (done) return done;
  }
  // A folder hidden by the rule shows nothing; one inside a gitignored folder neither, which the walk
  // finds from the .gitignore files above its start, read once.
  if (underHiddenFolder(req.visibility, req.start.rel)) return answer(req, { found: [], hidden: 0 }, "js");
  // Each file the walk shows is inside the root now, a regular file, and not hidden (find-index.ts).
  const walk = (capLayers: boolean) =>
    walkIndexed({
      root: req.root,
      start: req.start,
      visibility: req.visibility,
      allowDir: makeDirCheck(req.resolve),
      want: (rel) => glob(rel.slice(prefix.length)),
      signal: req.signal,
      onProgress: req.onProgress,
      index: req.index,
      capLayers,
    });
  try {
    const { files, hidden } = await walk(rgPath !== undefined);
    return answer(req, { found: files.sort(comparePaths), hidden }, "js");
  } catch (err) {
    if (!(err instanceof DeepIgnoreChain)) throw err;
  }
  // A crafted chain of nested .gitignore files costs the walk the cube of its depth: rg takes it, or,
  // when rg cannot be told the rule, the walk goes on without the cap.
  const done = await viaRg();
  if (done) return done;
  const { files, hidden } = await walk(false);
  return answer(req, { found: files.sort(comparePaths), hidden }, "js");
}

function answer(req: FindRequest, r: { found: string[]; hidden: number }, engine: Engine): FindAnswer {
  return {
    matches: r.found.slice(0, req.max),
    count: r.found.length,
    truncated: r.found.length > req.max,
    hidden: r.hidden,
    engine,
  };
}

/** Whether the start folder or one above it is hidden by the rule: then nothing below it is shown. */
function underHiddenFolder(visibility: Visibility, startRel: string): boolean {
  if (startRel === ".") return false;
  const parts = startRel.split("/");
  for (let i = 1; i <= parts.length; i++) if (visibility.hides(parts.slice(0, i).join("/"), true)) return true;
  return false;
}

async function listThroughRg(
  req: FindRequest,
  rgPath: string,
  excludes: string[],
  glob: (rel: string) => boolean,
  prefix: string,
): Promise<{ found: string[]; hidden: number; byWalk?: boolean }> {
  const candidates: string[] = [];
  let hidden = 0;
  const started = Date.now();
  // A folder inside a gitignored one is never entered by the walk; rg, which would list it, is not asked.
  if (!(await isInsideIgnored(req.root, req.start.rel))) {
    await listFilesRg(
      rgPath,
      req.start.abs,
      req.signal,
      (rel) => glob(rel) && candidates.push(prefix + rel),
      req.onProgress,
      excludes,
      literalTail(req.pattern.replace(/^\.\//, "")),
    );
    // Walked by descriptors now that rg is done (steady-tree.ts): what the rule hid is counted, and
    // where a folder changed while rg listed by name, the walk's own list is the answer (which names
    // rg listed, or left out, there could tell of what it read elsewhere).
    const judged = await judgeTree(req, started - STEADY_MARGIN_MS, (rel) => glob(rel.slice(prefix.length)));
    hidden = judged.hidden;
    if (judged.setAside !== undefined) return { found: judged.files.sort(comparePaths), hidden, byWalk: true };
  }
  // rg listed names by path: each is confirmed a file inside the root now, through descriptors
  // (confirm.ts), so a folder swapped for a link to outside while rg listed it shows no outside name,
  // and the visibility rule is applied to it and its folders (rg was told to leave those out; this
  // holds even if it did not). Where nothing on a name's way changed since before rg started, rg's
  // listing is the lookup (listedFile). Sorted first, so each folder is opened once and its parent is
  // still held (and the answer stays sorted).
  candidates.sort(comparePaths);
  const found: string[] = [];
  const shown = makeRuleCheck(req.visibility);
  const lookup = new BeneathLookup(req.root, started - STEADY_MARGIN_MS);
  try {
    for (const rel of candidates) if (shown(rel) && lookup.listedFile(rel)) found.push(rel);
  } finally {
    lookup.close();
  }
  return { found, hidden };
}
