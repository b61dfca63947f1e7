// What one version of the config makes: the toolsets' settings (their one parse), the tools this host
// offers, and the policy (envelope, pinned programs, posture). Built whole at start and at each reload,
// frozen, and swapped in at once: a call sees one version or the next, never a mix.
import { ConfigError, type Config } from "../config/load.js";
import { parseSettings, type Settings } from "../config/settings.js";
import { allDefinitions, EnvelopeError, resolveEnvelope } from "../policy/envelope-parse.js";
import { DEFAULT_ENVELOPE, type Envelope } from "../policy/envelope.js";
import type { PolicySetup } from "../policy/gates.js";
import { loadPrograms, ProgramLoadError, type Posture } from "../policy/programs.js";
import { agentToolsets, TOOLS } from "../registry.js";
import type { ClientCapability, Shape, ToolSpec } from "../tools/define.js";

export interface ConfigSnapshot {
  readonly config: Config;
  readonly settings: Settings;
  readonly listed: readonly ToolSpec[];
  readonly policy: PolicySetup;
}

/** What of the host's options a snapshot depends on. */
export interface SnapshotOptions {
  agent?: string;
  envelope?: string;
  policyPrograms?: string[];
  posture?: Posture;
  defaultPosture?: Posture;
  policyLog?: string;
  shape: Shape;
  env: Readonly<NodeJS.ProcessEnv>;
  offers?: readonly ClientCapability[];
}

export function snapshotOf(config: Config, o: SnapshotOptions): ConfigSnapshot {
  const settings = parseSettings(config, o.agent);
  return Object.freeze({
    config,
    settings,
    listed: Object.freeze(listTools(config, settings, o)),
    policy: policySetup(config, o),
  });
}

/** The envelope, the pinned programs and the posture; bad names or programs stop startup. */
function policySetup(config: Config, o: SnapshotOptions): PolicySetup {
  const agentEnvelope = o.agent === undefined ? undefined : config.agents[o.agent]?.envelope;
  const name = o.envelope ?? agentEnvelope ?? DEFAULT_ENVELOPE;
  let envelope: Envelope;
  try {
    envelope = resolveEnvelope(name, allDefinitions(config.envelopes ?? {}));
  } catch (err) {
    if (err instanceof EnvelopeError) throw new ConfigError(`${config.file ?? "agents.toml"}: ${err.message}.`);
    throw err;
  }
  let programs;
  try {
    programs = loadPrograms([...(config.policyPrograms ?? []), ...(o.policyPrograms ?? [])]);
  } catch (err) {
    if (err instanceof ProgramLoadError) throw new ConfigError(err.message);
    throw err;
  }
  if (o.posture !== undefined && programs.length === 0) {
    throw new ConfigError(
      `A default authorization (\`${o.posture}\`) needs at least one policy program: pass --policy PROGRAM, or drop --default-authorization.`,
    );
  }
  if (o.posture !== undefined && o.policyLog === undefined) {
    throw new ConfigError(
      `A default authorization (\`${o.posture}\`) needs a fresh --policy-log FILE, so its decisions are on record.`,
    );
  }
  return { envelope, programs, posture: o.posture ?? o.defaultPosture ?? "deny-unless-allowed" };
}

function listTools(config: Config, settings: Settings, o: SnapshotOptions): ToolSpec[] {
  const wanted = agentToolsets(config, o.agent);
  return TOOLS.filter(
    (t) =>
      t.shapes.includes(o.shape) &&
      (o.shape !== "client" || (t.clientNeeds ?? []).every((n) => o.offers?.includes(n))) &&
      (wanted === undefined || wanted.includes(t.toolset)) &&
      (t.enabled?.(settings, o.env) ?? true),
  );
}
