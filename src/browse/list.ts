// list_dir: one entry a line, paged by a cursor (the path of the last entry shown: the walk is sorted,
// so the next page skips everything up to it without the per-entry resolver, and a page costs the same
// wherever it starts) or by offset (entries before it are counted with the cheap found check). Folders end in `/`, executables carry `*`, links `@` (only links
// that stay inside the root are listed), files over 1 MiB show their size. Names are shown as
// src/fs/names.ts escapes them, so a newline in a name never splits an entry and every name reads back.
import { lstatSync } from "node:fs";
import { showName } from "../fs/names.js";
import { humanSize } from "../fs/text.js";
import type { Visibility } from "../policy/visibility.js";
import { folderStamp, indexedStart, indexKey, keepIndex, type PassedEntry } from "./list-index.js";
import { makeDirCheck, makeFoundCheck, makeVisibility, type Resolve } from "./visible.js";
import { comparePaths, walk, type WalkCounts, type WalkEntry } from "./walk.js";

const LIST_PAGE = 500;
const BIG = 1024 * 1024;

export interface ListRequest {
  root: string;
  start: { abs: string; rel: string };
  maxDepth: number;
  offset: number;
  /** The root-relative path of the last entry of the previous page: list what sorts after it (offset is then 0). */
  after?: string;
  maxOutputBytes: number;
  visibility: Pick<Visibility, "hides" | "rgExcludes">;
  resolve: Resolve;
  signal: AbortSignal;
  onProgress: (seen: number) => void;
}

export interface Listing {
  entries: string[];
  nextOffset?: number;
  /** Where the next page starts (ListRequest.after), when there is one. */
  nextAfter?: string;
  ignored: number;
  /** Entries the visibility rule left out, up to where this page ends (a hidden folder counts once). */
  hidden: number;
}

/** Through the walk's folder descriptor (`via`), before the walk moves on: never the name's current target. */
function describe(e: WalkEntry, name: string): string {
  name = showName(name);
  if (e.kind === "dir") return name + "/";
  if (e.kind === "symlink") return name + "@";
  let st;
  try {
    st = lstatSync(e.via, { throwIfNoEntry: false });
  } catch {
    st = undefined; // vanished since the walk: listed bare
  }
  if (!st) return name;
  const exe = st.isFile() && (st.mode & 0o111) !== 0 ? "*" : "";
  return name + exe + (st.size > BIG ? ` (${humanSize(st.size)})` : "");
}

export async function listDir(req: ListRequest): Promise<Listing> {
  const visible = makeVisibility(req.resolve);
  // A file the walk found is not a link and lies in a folder the walk checked: the found check gives
  // the resolver's verdict without a realpath (makeFoundCheck). A link still goes through the resolver.
  const found = makeFoundCheck(req.root, req.visibility);
  // A flat listing by offset starts where an earlier walk of the unchanged folder passed that entry,
  // as a cursor page does (list-index.ts); a walk from the start records what it passes.
  const key =
    req.maxDepth === 1 && req.after === undefined ? indexKey(req.root, req.start.rel, req.visibility) : undefined;
  const stamp = key === undefined ? undefined : folderStamp(req.root, req.start.rel);
  const from = key === undefined ? undefined : indexedStart(key, stamp, req.offset);
  const after = from?.rel ?? req.after;
  const passed: PassedEntry[] | undefined = stamp !== undefined && !from ? [] : undefined;
  const counts: WalkCounts = { seen: 0, ignored: from?.ignored ?? 0, hidden: from?.hidden ?? 0 };
  const prefix = req.start.rel === "." ? "" : req.start.rel + "/";
  const entries: string[] = [];
  let index = from ? req.offset : 0;
  let bytes = 0;
  const done = (out: Listing): Listing => {
    if (passed && key !== undefined) keepIndex(key, stamp, passed);
    return out;
  };
  const walker = walk(
    {
      root: req.root,
      start: req.start,
      maxDepth: req.maxDepth,
      visibility: req.visibility,
      allowDir: makeDirCheck(req.resolve),
      signal: req.signal,
      onProgress: req.onProgress,
      after,
    },
    counts,
  );
  let last: string | undefined;
  for await (const e of walker) {
    // Up to the cursor: shown on an earlier page, skipped before any per-entry work.
    if (after !== undefined && comparePaths(e.rel, after) <= 0) continue;
    // Files and links are checked (control-plane files, links out of the root); folders were checked by
    // the walk. Before the offset a file counts on the walk's own verdict (the visibility rule; not a
    // link when read): it is not shown, and counting it costs nothing more.
    const shown = index >= req.offset;
    if (e.kind === "file" ? shown && found(e.rel, e.via) === undefined : e.kind !== "dir" && !(await visible(e.rel)))
      continue;
    index++;
    passed?.push({ rel: e.rel, hidden: counts.hidden, ignored: counts.ignored });
    if (!shown) continue;
    const line = describe(e, e.rel.slice(prefix.length));
    bytes += Buffer.byteLength(line) + 1;
    if (entries.length >= LIST_PAGE || bytes > req.maxOutputBytes - 1024) {
      return done({
        entries,
        nextOffset: req.offset + entries.length,
        nextAfter: last,
        ignored: counts.ignored,
        hidden: counts.hidden,
      });
    }
    entries.push(line);
    last = e.rel;
  }
  return done({ entries, ignored: counts.ignored, hidden: counts.hidden });
}
