// The arguments check: words that may name paths are resolved against the step's cwd. Credential
// paths are refused always; under a policy, absolute or `..` paths must stay inside the root or a
// folder of _allowed_paths.
import path from "node:path";
import { Refusal, errnoCode } from "../errors.js";
import { quarantineGlob } from "../policy/quarantine.js";
import { canonicalize, inControlPlane, isInside } from "../workspace/paths.js";

export interface ArgumentRules {
  policy: boolean;
  root: string;
  allowedPaths: string[];
  controlPlane: readonly string[];
}

/** The parts of one argument that may name a path: the word, an `--opt=value` value, a `-Xvalue` value. */
function pathCandidates(arg: string): string[] {
  const out = [arg];
  if (arg.startsWith("-") && arg.length > 2) out.push(arg.slice(2));
  const eq = arg.indexOf("=");
  if (eq >= 0) out.push(arg.slice(eq + 1));
  return out.filter((c) => c !== "" && c !== "{}");
}

export async function checkArgs(args: string[], cwd: string, ctx: ArgumentRules): Promise<void> {
  for (const arg of args) {
    for (const c of pathCandidates(arg)) {
      const lexical = path.resolve(cwd, c);
      let real = lexical;
      try {
        real = await canonicalize(lexical);
      } catch (err) {
        // A word that cannot be walked as a path (through a file, a loop, no access) names no file
        // the program could open either; the lexical form is still checked below.
        if (!["ENOTDIR", "ELOOP", "EACCES", "ENAMETOOLONG"].includes(errnoCode(err) ?? "")) throw err;
      }
      const q = quarantineGlob(lexical) ?? quarantineGlob(real);
      if (q !== undefined) {
        throw new Refusal(
          `The argument \`${arg}\` names a credential path (${q}); shell commands may never name those.`,
          "Do not retry: credentials are off limits to every tool.",
        );
      }
      if (inControlPlane(lexical, ctx.controlPlane) || inControlPlane(real, ctx.controlPlane)) {
        throw new Refusal(
          `The argument \`${arg}\` names latch's own control plane (its config, state or policy logs); no command may touch it.`,
          "Do not retry: this is a fixed rule, not a missing permission.",
        );
      }
      if (!ctx.policy) continue;
      if (!path.isAbsolute(c) && !c.split("/").includes("..")) continue;
      if (isInside(ctx.root, real) || ctx.allowedPaths.some((p) => isInside(p, real))) continue;
      throw new Refusal(
        `The argument \`${arg}\` resolves to ${real}, outside the workspace ${ctx.root}.`,
        "Use paths inside the workspace, or ask the user to add the path to _allowed_paths.",
      );
    }
  }
}
