// What rg told of a file without a line (a binary file's match, a count past the lines kept), matched
// again by latch on the file inside the root where a folder on its way moved while rg ran
// (confirm.ts "recount"): rg may have read another file by that name then (review g60). The JS
// engine's own matcher runs on latch's descriptor, a regex in the worker (grep-pool.ts), so a slow
// pattern is bounded here as there. What latch cannot match again is left out, and counted.
import { closeSync } from "node:fs";
import { ToolError } from "../errors.js";
import type { BeneathLookup } from "./confirm.js";
import type { FileHits, GrepQuery } from "./grep-collect.js";
import { makeMatcher, searchFile, type FileResult, type Matcher } from "./grep-match.js";
import { RegexSearch } from "./grep-pool.js";

export class Recount {
  /** Files left out because latch could not match them again (a pattern JS rejects, or too slow there). */
  unconfirmed = 0;
  private matcher: Matcher | null | undefined;
  private regex: RegexSearch | undefined;
  private scratch: Buffer | undefined;

  constructor(
    private readonly query: GrepQuery,
    private readonly lookup: BeneathLookup,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Whether the file inside matches as rg said (binary or not); its count becomes latch's own, never
   * below the lines rg kept (each read the same inside already).
   */
  async shown(hits: FileHits, binary: boolean): Promise<boolean> {
    const fd = this.lookup.open(hits.path);
    if (fd === null) return false;
    let found: FileResult | undefined;
    try {
      found = await this.search(fd, hits.path);
    } catch (err) {
      if (!(err instanceof ToolError) || (err.code !== "ETIMEDOUT" && err.code !== "EINVAL")) throw err;
      this.unconfirmed++;
      return false;
    } finally {
      closeSync(fd);
    }
    if (found === undefined || (found.kind === "binary") !== binary) return false;
    hits.matches = Math.max(found.hits.matches, hits.lines.filter((l) => l.match).length);
    return true;
  }

  private async search(fd: number, rel: string): Promise<FileResult | undefined> {
    // A pattern rg takes and JS does not throws EINVAL here: that file cannot be counted again.
    this.matcher ??= makeMatcher(this.query);
    if (this.query.regex) {
      this.regex ??= new RegexSearch(this.query, this.signal);
      return (await this.regex.search([{ fd, rel, room: 0 }]))[0];
    }
    this.scratch ??= Buffer.allocUnsafe(1 << 16);
    return searchFile(fd, rel, 0, this.matcher, this.query, this.scratch);
  }

  close(): void {
    this.regex?.close();
  }
}
