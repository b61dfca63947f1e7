// Policy programs (step 4): executables that read `{effect, tool, request, session}` as JSON on stdin
// and print `{"decision": "allow"|"deny"|"abstain", "reason": "…"}` (or the legacy
// `{"allow": bool, "reason"}`). Each runs through the shell's bounded runner (src/process/exec.ts) with
// a 2 s limit, a cleared environment (but for the run mark) and nothing on stdin but the request. Any
// failure — a crash, a timeout, invalid JSON, an empty reason, conflicting fields, a file changed
// since startup — is a deny with the failure as its reason.
import { accessSync, constants, readFileSync } from "node:fs";
import path from "node:path";
import type { Decision } from "./decision.js";
import { sha256 } from "../fs/text.js";
import { StrictCapture } from "../process/capture.js";
import { runBounded } from "../process/exec.js";

const PROGRAM_TIMEOUT_MS = 2000;
const MAX_OUTPUT_BYTES = 64 * 1024;

export type Posture = "allow-unless-forbidden" | "deny-unless-allowed";
const POSTURES: readonly Posture[] = ["allow-unless-forbidden", "deny-unless-allowed"];

export interface PolicyProgram {
  path: string;
  /** The file's sha256, pinned at startup. */
  sha256: string;
}

export class ProgramLoadError extends Error {}

/** Pin each program's identity now; a missing or non-executable file stops startup. */
export function loadPrograms(paths: string[], base = process.cwd()): PolicyProgram[] {
  return paths.map((p) => {
    const abs = path.resolve(base, p);
    try {
      accessSync(abs, constants.X_OK);
      return { path: abs, sha256: sha256(readFileSync(abs)) };
    } catch (err) {
      throw new ProgramLoadError(
        `The policy program \`${abs}\` cannot be used (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}). Pass an existing executable file with --policy.`,
      );
    }
  });
}

export function parsePosture(raw: string, what: string): Posture {
  if (!POSTURES.includes(raw as Posture))
    throw new ProgramLoadError(
      `Expected \`${what}\` to be allow-unless-forbidden or deny-unless-allowed, got \`${raw}\``,
    );
  return raw as Posture;
}

export interface ProgramInput {
  effect: Record<string, unknown>;
  tool: string;
  request: unknown;
  session: string;
}

/** Run one program and read its answer; never throws: a failure is a deny that says what failed. */
export async function runProgram(prog: PolicyProgram, input: ProgramInput): Promise<Decision> {
  const origin = `program:${prog.path} (sha256 ${prog.sha256.slice(0, 12)})`;
  const block = (why: string): Decision => ({
    action: "deny",
    reason: `policy program ${path.basename(prog.path)} ${why}, so the call is blocked`,
    gate: "policy",
    origin,
  });
  let now: string;
  try {
    now = sha256(readFileSync(prog.path));
  } catch (err) {
    return block(
      `can no longer be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); restart latch`,
    );
  }
  if (now !== prog.sha256) return block("changed on disk since latch started; restart latch to accept the new version");

  const run = await runOnce(prog.path, JSON.stringify(input));
  if (run.spawnError) return block(`could not run (${run.spawnError})`);
  if (run.timedOut) return block(`did not answer within ${PROGRAM_TIMEOUT_MS / 1000} s`);
  if (run.overLimit) return block(`printed more than ${MAX_OUTPUT_BYTES} bytes`);
  if (run.exitCode !== 0)
    return block(
      `exited with ${run.signal ? `signal ${run.signal}` : `status ${run.exitCode}`}${run.stderr ? `: ${run.stderr.trim().slice(0, 200)}` : ""}`,
    );
  const answer = parseAnswer(run.stdout);
  if (typeof answer === "string") return block(answer);
  return {
    action: answer.decision,
    reason: `policy program ${path.basename(prog.path)}: ${answer.reason}`,
    gate: "policy",
    origin,
    ...(answer.disclose ? { disclose: true } : {}),
  };
}

/** The second, optional phase (issue 29): a program that answered `"disclose": true` sees what the call produced. */
export interface DiscloseInput {
  phase: "disclose";
  tool: string;
  session: string;
  effect: Record<string, unknown>;
  /** Where the scanners found secrets: rule ids, counts, ranges; never the secret. */
  findings: { rule: string; count: number; ranges: { at: string; start: number; end: number }[] }[];
  status: string;
  bytes: number;
  sha256: string;
  /** The raw result, only with --policy-evidence. */
  result?: unknown;
}

export type DiscloseVerdict = "allow" | "redact" | "withhold" | "abstain";

/** Run a program's disclose phase; never throws: a failure withholds the result, saying why. */
export async function runDisclosePhase(
  prog: PolicyProgram,
  input: DiscloseInput,
): Promise<{ verdict: DiscloseVerdict; reason: string; origin: string }> {
  const origin = `program:${prog.path} (sha256 ${prog.sha256.slice(0, 12)})`;
  const name = path.basename(prog.path);
  const withhold = (why: string) => ({
    verdict: "withhold" as const,
    reason: `policy program ${name} ${why}, so the output is withheld`,
    origin,
  });
  let now: string;
  try {
    now = sha256(readFileSync(prog.path));
  } catch {
    return withhold("can no longer be read");
  }
  if (now !== prog.sha256) return withhold("changed on disk since latch started");
  const run = await runOnce(prog.path, JSON.stringify(input));
  if (run.spawnError) return withhold(`could not run (${run.spawnError})`);
  if (run.timedOut) return withhold(`did not answer within ${PROGRAM_TIMEOUT_MS / 1000} s`);
  if (run.overLimit) return withhold(`printed more than ${MAX_OUTPUT_BYTES} bytes`);
  if (run.exitCode !== 0)
    return withhold(`exited with ${run.signal ? `signal ${run.signal}` : `status ${run.exitCode}`}`);
  let v: { decision?: unknown; reason?: unknown };
  try {
    v = JSON.parse(run.stdout) as typeof v;
  } catch {
    return withhold("printed something that is not JSON");
  }
  if (typeof v?.reason !== "string" || v.reason.trim() === "") return withhold("gave no reason");
  const d = v.decision === "deny" ? "withhold" : v.decision;
  if (!["allow", "redact", "withhold", "abstain"].includes(d as string))
    return withhold(`gave the decision ${JSON.stringify(v.decision)}, not allow, redact, withhold or abstain`);
  return { verdict: d as DiscloseVerdict, reason: `policy program ${name}: ${v.reason.trim()}`, origin };
}

/** The program's answer, or why it is not one. */
export function parseAnswer(
  stdout: string,
): { decision: "allow" | "deny" | "abstain"; reason: string; disclose?: boolean } | string {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    return `printed something that is not JSON (${JSON.stringify(stdout.trim().slice(0, 80))})`;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return "printed JSON that is not an object";
  const o = v as { decision?: unknown; allow?: unknown; reason?: unknown; disclose?: unknown };
  if (o.disclose !== undefined && typeof o.disclose !== "boolean")
    return `gave disclose = ${JSON.stringify(o.disclose)}, not true or false`;
  if (typeof o.reason !== "string" || o.reason.trim() === "")
    return "gave no reason (a decision needs a nonempty reason)";
  const hasDecision = o.decision !== undefined;
  const hasAllow = o.allow !== undefined;
  if (!hasDecision && !hasAllow) return "gave no decision";
  if (hasDecision && !["allow", "deny", "abstain"].includes(o.decision as string))
    return `gave the decision ${JSON.stringify(o.decision)}, not allow, deny or abstain`;
  if (hasAllow && typeof o.allow !== "boolean") return `gave allow = ${JSON.stringify(o.allow)}, not true or false`;
  const fromAllow = hasAllow ? (o.allow ? "allow" : "deny") : undefined;
  if (hasDecision && hasAllow && fromAllow !== o.decision)
    return `gave conflicting fields (decision ${JSON.stringify(o.decision)}, allow ${JSON.stringify(o.allow)})`;
  return {
    decision: (hasDecision ? o.decision : fromAllow) as "allow" | "deny" | "abstain",
    reason: o.reason.trim(),
    ...(o.disclose === true ? { disclose: true } : {}),
  };
}

/**
 * The program runs through the shell's bounded runner: its own session, the run mark that the
 * process-tree kill and crash recovery follow (so a child that leaves the group or the session still
 * dies with it), SIGKILL at once on a timeout or overflow (a policy program has nothing to flush).
 */
async function runOnce(file: string, stdin: string) {
  const stdout = new StrictCapture(MAX_OUTPUT_BYTES);
  const stderr = new StrictCapture(MAX_OUTPUT_BYTES);
  const run = await runBounded({
    file,
    args: [],
    cwd: path.dirname(file),
    env: {}, // cleared: the runner adds only the run mark
    stdin,
    deadline: Date.now() + PROGRAM_TIMEOUT_MS,
    signal: new AbortController().signal,
    stdout,
    stderr,
    graceMs: 0,
  });
  return { ...run, stdout: stdout.result().text, stderr: stderr.result().text };
}

/** Combine the programs' answers: any deny blocks; else any allow allows; if all abstain, the posture decides. */
export function combinePrograms(answers: Decision[], posture: Posture): Decision {
  const deny = answers.find((a) => a.action === "deny");
  if (deny) return deny;
  const allow = answers.find((a) => a.action === "allow");
  if (allow) return allow;
  return posture === "allow-unless-forbidden"
    ? {
        action: "allow",
        reason: "every policy program abstained; the posture allow-unless-forbidden leaves the call to the envelope",
        gate: "posture",
        origin: "posture:allow-unless-forbidden",
      }
    : {
        action: "deny",
        reason: "every policy program abstained, and the posture deny-unless-allowed denies what no program allows",
        gate: "posture",
        origin: "posture:deny-unless-allowed",
      };
}

/**
 * The posture for `latch mcp`: LATCH_DEFAULT_AUTHORIZATION, else allow-unless-forbidden; any other
 * value stops startup (ProgramLoadError).
 */
export function postureFromEnv(env: NodeJS.ProcessEnv = process.env): Posture {
  const raw = env.LATCH_DEFAULT_AUTHORIZATION;
  if (raw === undefined || raw === "") return "allow-unless-forbidden";
  return parsePosture(raw, "LATCH_DEFAULT_AUTHORIZATION");
}
