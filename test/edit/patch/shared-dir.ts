// Where shared/ is: beside the clone (CI: `../shared` from the repo root), or beside the main
// checkout when the tests run in a git worktree of it. Missing, it is an error: a conformance test
// that silently finds no scenarios would pass having checked nothing.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export function sharedDir(sub: string): string {
  const tried: string[] = [path.resolve(REPO, "..", "shared", sub)];
  try {
    const common = execFileSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
    tried.push(path.resolve(common, "..", "..", "shared", sub));
  } catch {
    // not a git checkout: only the first place counts
  }
  const found = tried.find((p) => existsSync(p));
  if (!found)
    throw new Error(`shared/${sub} is missing; looked in ${tried.join(" and ")}. CI lays shared/ beside the clone.`);
  return found;
}
