// The layers of src/, as docs/architecture.md writes them down ("Layers"), held against every import:
// a room (a folder of src/, or a file at its top) imports only rooms on its own floor or below, and no
// two rooms import each other, directly or around a circle. Type-only imports count too: a type that
// two rooms need belongs in the lower one.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { importsOf, type Import } from "./helpers/imports.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SRC = path.join(REPO, "src");

/** The room of a file under src/: its top folder, or the file itself at the top. */
export function roomOf(src: string, file: string): string {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? `${parts[0]}/` : parts[0];
}

/** The floors of docs/architecture.md's "Layers" block, top first: `N  room, room   what it does`. */
export function floorsOf(doc: string): Map<string, number> {
  const section = doc.slice(doc.indexOf("\n## Layers"));
  const block = /```text\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'docs/architecture.md: no ```text block under "## Layers"');
  const floors = new Map<string, number>();
  for (const line of block[1].split("\n")) {
    const m = /^\s*(\d+)\s+(\S.*?)(?:\s{2,}|$)/.exec(line);
    if (!m) continue;
    for (const room of m[2].split(",").map((r) => r.trim())) floors.set(room, Number(m[1]));
  }
  return floors;
}

/** What is wrong with an import graph under these floors: unknown rooms, imports that run up, circles. */
export function layerViolations(src: string, imports: Import[], floors: Map<string, number>): string[] {
  const problems: string[] = [];
  const edges = new Map<string, Set<string>>();
  for (const imp of imports) {
    const a = roomOf(src, imp.from);
    const b = roomOf(src, imp.to);
    if (a === b) continue;
    for (const r of [a, b]) if (!floors.has(r)) problems.push(`${r} is on no floor of docs/architecture.md`);
    if (floors.has(a) && floors.has(b) && floors.get(b)! < floors.get(a)!)
      problems.push(
        `${path.relative(src, imp.from)} imports ${path.relative(src, imp.to)}${imp.typeOnly ? " (type)" : ""}: ${a} (floor ${floors.get(a)}) may not import ${b} (floor ${floors.get(b)}), which is above it`,
      );
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a)!.add(b);
  }
  for (const circle of circlesOf(edges)) problems.push(`rooms import each other in a circle: ${circle.join(" → ")}`);
  return [...new Set(problems)];
}

/** Strongly connected groups of more than one room (Tarjan), each as a path back to its start. */
function circlesOf(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push([...group.sort(), group[0]]);
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

const edge = (from: string, to: string, typeOnly: boolean): Import => ({
  from,
  to,
  relative: true,
  typeOnly,
  dynamic: false,
});

function sourceImports(): Import[] {
  return readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) => importsOf(path.join(SRC, f), readFileSync(path.join(SRC, f), "utf8")))
    .filter((i) => i.relative);
}

describe("architecture: the floors of src/ against every import", () => {
  const floors = floorsOf(readFileSync(path.join(REPO, "docs", "architecture.md"), "utf8"));

  it("every room of src/ is on a floor, no import runs up, and no rooms import each other", () => {
    const imports = sourceImports();
    assert.ok(imports.length > 500, `read only ${imports.length} imports: the reader is broken`);
    for (const e of readdirSync(SRC, { withFileTypes: true })) {
      const room = e.isDirectory() ? `${e.name}/` : e.name;
      if (e.isDirectory() || e.name.endsWith(".ts")) assert.ok(floors.has(room), `${room} is on no floor`);
    }
    assert.deepEqual(layerViolations(SRC, imports, floors), []);
  });

  it("an import that runs up is caught, type-only or not (the check can fail)", () => {
    const up = [edge(path.join(SRC, "fs", "paths.ts"), path.join(SRC, "tools", "define.ts"), true)];
    const found = layerViolations(SRC, up, floors);
    assert.equal(found.length, 1);
    assert.match(
      found[0],
      /fs\/paths\.ts imports tools\/define\.ts \(type\): fs\/ \(floor \d+\) may not import tools\//,
    );
  });

  it("two rooms on one floor that import each other are a circle", () => {
    const floor = floors.get("shell/")!;
    assert.equal(floors.get("browse/"), floor, "shell/ and browse/ share a floor in docs/architecture.md");
    const both = [
      edge(path.join(SRC, "shell", "plan.ts"), path.join(SRC, "browse", "walk.ts"), false),
      edge(path.join(SRC, "browse", "walk.ts"), path.join(SRC, "shell", "plan.ts"), true),
    ];
    assert.deepEqual(layerViolations(SRC, both, floors), [
      "rooms import each other in a circle: browse/ → shell/ → browse/",
    ]);
  });

  it("reads type-only, re-exported and dynamic imports", () => {
    const file = path.join(SRC, "tools", "x.ts");
    const text = [
      'import type { A } from "../policy/effect.js";',
      'import { type B, type C } from "../fs/paths.js";',
      'import { d, type E } from "../edit/diff.js";',
      'export type { F } from "../sandbox/types.js";',
      'const m = await import("../skills/discover.js");',
    ].join("\n");
    assert.deepEqual(
      importsOf(file, text).map((i) => [path.relative(SRC, i.to), i.typeOnly]),
      [
        ["policy/effect.ts", true],
        ["fs/paths.ts", true],
        ["edit/diff.ts", false],
        ["sandbox/types.ts", true],
        ["skills/discover.ts", false],
      ],
    );
  });
});
