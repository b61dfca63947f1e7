// Paths no write tool may create, change or remove, whatever the envelope says: a repository's own
// `.git` folder (its hooks and config run code on the next git command).
import { Refusal } from "../errors.js";
import type { ResolvedPath } from "./paths.js";

export function refuseGitWrite(target: ResolvedPath): void {
  if (target.rel.split("/").includes(".git"))
    throw new Refusal(
      `\`${target.input}\` is inside a \`.git\` folder; latch's write tools never change a repository's internals.`,
      "Use git through local_shell for what git should do.",
    );
}
