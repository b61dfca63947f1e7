// Pins: what a person approved of each attached tool, the sha256 of its definition's canonical JSON
// (name, description, input and output schema, annotations), kept in latch.db. A tool is offered only
// while the server sends exactly what was pinned: a new tool, a changed one or a renamed one (a new
// name) waits, with the diff, until `latch servers approve <server>` pins what the server sends now.
import type Database from "better-sqlite3";
import { createTwoFilesPatch } from "diff";
import { canonicalJson } from "../audit/canonical-json.js";
import { openStateDb } from "../fs/db.js";

export interface Pin {
  sha256: string;
  /** The definition as approved, canonical JSON. */
  definition: string;
}

/** What the server sends now against what was approved, one tool at a time. */
export interface PinCheck {
  tool: string;
  state: "pinned" | "new" | "changed" | "removed";
  sha256?: string;
  /** For a new, changed or removed tool: the unified diff of its definition (approved → now). */
  diff?: string;
}

export class Pins {
  private readonly db: Database.Database;

  /**
   * `file`: latch.db in the state dir, on a connection of its own: read when a server's tools are
   * listed and written when a person approves them, not at every call as the ledger's (which the undo
   * store and the log heads share).
   */
  constructor(file: string) {
    this.db = openStateDb(file);
  }

  close(): void {
    this.db.close();
  }

  of(server: string): Map<string, Pin> {
    const rows = this.db.prepare("SELECT tool, sha256, definition FROM tool_pins WHERE server = ?").all(server) as {
      tool: string;
      sha256: string;
      definition: string;
    }[];
    return new Map(rows.map((r) => [r.tool, { sha256: r.sha256, definition: r.definition }]));
  }

  /** Pin exactly these definitions for the server (what it no longer sends is unpinned). */
  replace(server: string, tools: readonly { upstream: string; sha256: string; definition: unknown }[]): void {
    const at = new Date().toISOString();
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM tool_pins WHERE server = ?").run(server);
      const put = this.db.prepare(
        "INSERT INTO tool_pins (server, tool, sha256, definition, approved_at) VALUES (?, ?, ?, ?, ?)",
      );
      for (const t of tools) put.run(server, t.upstream, t.sha256, canonicalJson(t.definition), at);
    })();
  }
}

/** Each tool the server sends, checked against the pins; and each pinned tool it no longer sends. */
export function checkPins(
  pins: ReadonlyMap<string, Pin>,
  now: readonly { upstream: string; sha256: string; definition: unknown }[],
): PinCheck[] {
  const out: PinCheck[] = [];
  for (const t of now) {
    const pin = pins.get(t.upstream);
    const json = canonicalJson(t.definition);
    if (pin?.sha256 === t.sha256) out.push({ tool: t.upstream, state: "pinned", sha256: t.sha256 });
    else
      out.push({
        tool: t.upstream,
        state: pin ? "changed" : "new",
        sha256: t.sha256,
        diff: definitionDiff(t.upstream, pin?.definition, json),
      });
  }
  for (const [tool, pin] of pins) {
    if (!now.some((t) => t.upstream === tool))
      out.push({ tool, state: "removed", diff: definitionDiff(tool, pin.definition, undefined) });
  }
  return out;
}

/** A unified diff of two canonical definitions, pretty-printed a key a line so the change shows. */
function definitionDiff(tool: string, before: string | undefined, after: string | undefined): string {
  const pretty = (j: string | undefined) => (j === undefined ? "" : JSON.stringify(JSON.parse(j), null, 2) + "\n");
  return createTwoFilesPatch(`${tool} (approved)`, `${tool} (now)`, pretty(before), pretty(after), "", "", {
    context: 3,
  });
}
