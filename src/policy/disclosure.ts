// The disclose phase's policy (issue 29): the envelope's `[disclosure]` mode for the tool, then each
// program that asked to see results; the strictest wins (withhold > redact > report > allow), as for
// execution. A program's abstention defers; a failed program withholds.
import type { DisclosureMode, Envelope } from "./envelope.js";
import { toolMatches } from "./envelope.js";
import { orderedToolPatterns } from "./envelope-eval.js";
import { runDisclosePhase, type DiscloseInput, type PolicyProgram } from "./programs.js";

const RANK: Record<DisclosureMode, number> = { allow: 0, report: 1, redact: 2, withhold: 3 };

export interface DisclosureVerdict {
  mode: DisclosureMode;
  reason: string;
  origin: string;
}

/** The envelope's mode for this tool: the most specific `disclosure.tools` pattern, else `disclosure.secrets`. */
export function envelopeDisclosure(env: Envelope, tool: string): DisclosureVerdict {
  for (const [pattern, mode] of orderedToolPatterns(env.disclosure.tools))
    if (toolMatches(pattern, tool))
      return {
        mode,
        reason: `disclosure.tools."${pattern}" = ${mode}`,
        origin: `envelope:${env.name}/disclosure.tools.${pattern}`,
      };
  const mode = env.disclosure.secrets;
  return { mode, reason: `disclosure.secrets = ${mode}`, origin: `envelope:${env.name}/disclosure.secrets` };
}

/** The strictest of the verdicts; on a tie the later (a program's) explains best. */
export function strictestDisclosure(verdicts: readonly DisclosureVerdict[]): DisclosureVerdict {
  let out = verdicts[0];
  for (const v of verdicts.slice(1)) if (RANK[v.mode] >= RANK[out.mode]) out = v;
  return out;
}

/** Every program that asked (`disclose: true`) answers the disclose phase; allow/redact/withhold, abstain skipped. */
export async function programDisclosures(
  programs: readonly PolicyProgram[],
  input: DiscloseInput,
): Promise<DisclosureVerdict[]> {
  const answers = await Promise.all(programs.map((p) => runDisclosePhase(p, input)));
  return answers
    .filter((a) => a.verdict !== "abstain")
    .map((a) => ({ mode: a.verdict as DisclosureMode, reason: a.reason, origin: a.origin }));
}
