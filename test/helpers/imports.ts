// The imports of a TypeScript file as the tests that read the import graph see them
// (test/architecture.test.ts: the floors of src/; test/cli/lazy-loads.test.ts: what a start loads).
import path from "node:path";

export interface Import {
  from: string;
  /** The file a relative import names (`./x.js` written for `./x.ts`), or the package a bare one names. */
  to: string;
  relative: boolean;
  /** Every name imported is a type (`import type`, or each name marked `type`): nothing of it runs. */
  typeOnly: boolean;
  /** `import()`: evaluated when it runs, not when the file loads. */
  dynamic: boolean;
}

/** Every import and re-export of a file, static (side-effect imports too) and dynamic. */
export function importsOf(file: string, text: string): Import[] {
  const out: Import[] = [];
  const add = (spec: string, typeOnly: boolean, dynamic: boolean) => {
    const relative = spec.startsWith("./") || spec.startsWith("../");
    const to = relative ? path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts") : spec;
    out.push({ from: file, to, relative, typeOnly, dynamic });
  };
  const stat = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?(?:([^;]*?)\s+from\s+)?["']([^"']+)["']/g;
  for (const m of text.matchAll(stat)) {
    const names = (m[2] ?? "").trim();
    const braced = /^\{([\s\S]*)\}$/.exec(names);
    const allTypes =
      braced !== null &&
      braced[1]
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean)
        .every((n) => n.startsWith("type "));
    add(m[3], m[1] !== undefined || allTypes, false);
  }
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) add(m[1], false, true);
  return out;
}
