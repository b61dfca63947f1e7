// The arguments check, in every mode (with or without a shell policy, for local_shell and run_tool):
// each word that may name a path is resolved against the step's cwd, through symlinks, and refused
// when it is or contains latch's control plane or a credential store, names a quarantined path, or
// lies outside the root (/proc, /sys and /dev/fd included; /dev/null is the one exception) unless a
// folder of _allowed_paths holds it. Uncontained, a workspace folder that holds a quarantined path is
// refused too (contained, the sandbox masks those: sandbox/secrets.ts). Run at plan time and again
// right before each step runs, so a link made by an earlier step (`lnk -> /etc`, then `cat
// lnk/hostname`) is seen.
import path from "node:path";
import { Refusal, errnoCode } from "../errors.js";
import { quarantineGlob } from "../fs/quarantine.js";
import { credentialStores } from "../sandbox/masks.js";
import { scanWorkspace } from "../sandbox/secrets.js";
import { canonicalize, inControlPlane, isInside } from "../fs/paths.js";

export interface ArgumentRules {
  root: string;
  allowedPaths: readonly string[];
  controlPlane: readonly string[];
  /** The HOME latch started with: the sandbox hides its credential stores (masks.ts), and so does this check. */
  userHome: string | undefined;
  /**
   * Do the call's processes run contained? Then the sandbox masks the workspace's quarantined files
   * (sandbox/secrets.ts) and a folder that holds one may be named; uncontained (or unset) it may not.
   */
  contained?: boolean;
}

/** A refusal by a fixed rule: it stands in every mode, inside wrappers too (never noted as opaque). */
export class FixedRuleRefusal extends Refusal {}

const OUTSIDE_ALLOWED = new Set(["/dev/null"]);

/**
 * The parts of one argument that may name a path: the word, an `--opt=value` value, and in a
 * `-xyzVALUE` cluster each tail that starts like a path (`-cvf/tmp/x` → `/tmp/x`, `-C../x` → `../x`).
 */
function pathCandidates(arg: string): string[] {
  const out = [arg];
  if (arg.startsWith("-") && !arg.startsWith("--") && arg.length > 2) {
    out.push(arg.slice(2));
    for (let k = 3; k < arg.length; k++) {
      const c = arg[k];
      if (c === "/" || c === "~" || (c === "." && arg[k - 1] !== ".")) out.push(arg.slice(k));
    }
  }
  const eq = arg.indexOf("=");
  if (eq >= 0) out.push(arg.slice(eq + 1));
  return [...new Set(out)].filter((c) => c !== "" && c !== "{}");
}

export async function checkArgs(args: readonly string[], cwd: string, ctx: ArgumentRules): Promise<void> {
  if (args.length === 0) return;
  // As the sandbox does: a store that holds the workspace itself is left to the other checks.
  const stores = credentialStores(ctx.userHome).filter((s) => !isInside(s, ctx.root));
  // Uncontained, nothing masks the workspace's own secrets: the walk the sandbox makes, once per check.
  let secrets: readonly string[] | undefined;
  const workspaceSecrets = () => (secrets ??= ctx.contained === true ? [] : scanWorkspace(ctx.root).secrets);
  for (const arg of args) {
    for (const c of pathCandidates(arg)) await checkCandidate(arg, c, cwd, { stores, workspaceSecrets }, ctx);
  }
}

interface Held {
  stores: readonly string[];
  workspaceSecrets(): readonly string[];
}

async function checkCandidate(arg: string, c: string, cwd: string, held: Held, ctx: ArgumentRules): Promise<void> {
  const { stores } = held;
  const lexical = path.resolve(cwd, c);
  let real = lexical;
  try {
    real = await canonicalize(lexical);
  } catch (err) {
    // A word that cannot be walked as a path (through a file, a loop, no access) names no file the
    // program could open either; the lexical form is still checked below.
    if (!["ENOTDIR", "ELOOP", "EACCES", "ENAMETOOLONG"].includes(errnoCode(err) ?? "")) throw err;
  }
  const q = quarantineGlob(lexical) ?? (real === lexical ? undefined : quarantineGlob(real));
  if (q !== undefined) {
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` names a credential path (${q}); shell commands may never name those.`,
      "Do not retry: credentials are off limits to every tool.",
    );
  }
  if (inControlPlane(lexical, ctx.controlPlane) || inControlPlane(real, ctx.controlPlane)) {
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` names latch's own control plane (its config, state, policy logs, policy programs or skills); no command may touch it.`,
      "Do not retry: this is a fixed rule, not a missing permission.",
    );
  }
  if (!isInside(ctx.root, real) && !OUTSIDE_ALLOWED.has(real) && !ctx.allowedPaths.some((p) => isInside(p, real)))
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` resolves to ${real}, outside the workspace ${ctx.root}.`,
      "Use paths inside the workspace, or ask the user to add the path to _allowed_paths.",
    );
  // Inside the root (or an allowed path), a folder may still hold the control plane or a credential
  // store (a workspace that is the home folder): naming it lets a program walk into them.
  const holds = (p: string) => isInside(lexical, p) || isInside(real, p);
  const within = (p: string) => isInside(p, lexical) || isInside(p, real);
  if (ctx.controlPlane.some(holds)) {
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` names a folder that holds latch's own control plane (its config, state, policy logs, policy programs or skills); no command may touch it.`,
      "Do not retry: this is a fixed rule, not a missing permission. Name the files you need instead.",
    );
  }
  const inStore = stores.find(within);
  if (inStore !== undefined) {
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` names a path in the credential store ${inStore}; shell commands may never reach it.`,
      "Do not retry: credentials are off limits to every tool.",
    );
  }
  const store = stores.find(holds);
  if (store !== undefined) {
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` names a folder that holds the credential store ${store}; shell commands may never reach it.`,
      "Do not retry: name the files you need instead.",
    );
  }
  // Uncontained, a program given a folder may read every file under it: one that holds a quarantined
  // workspace path is refused. Its presence is said (the glob), never its name or contents.
  if (!isInside(ctx.root, real) && !isInside(ctx.root, lexical)) return;
  const secret = held.workspaceSecrets().find((p) => p !== lexical && p !== real && holds(p));
  if (secret !== undefined) {
    throw new FixedRuleRefusal(
      `The argument \`${arg}\` names a folder that holds a file under the credential quarantine (${quarantineGlob(secret) ?? "a credential"}), and this call's processes run uncontained: a program that walks the folder would read it.`,
      "Name the files or subfolders you need instead (read_file and grep skip credentials), or ask the user to make the sandbox available (bubblewrap; _containment), which masks them.",
    );
  }
}
