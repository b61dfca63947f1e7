// latch config check [FILE] [--envelope NAME] [--agent NAME]: validate an agents.toml (exit 1 naming
// file, line and key at fault) and print the envelope in force, its rules in the order they are tried.
import type { Command } from "commander";
import { chooseConfigPath, ConfigError, loadConfig } from "../config/load.js";
import { describeEnvelope } from "../policy/envelope-eval.js";
import { DEFAULT_ENVELOPE } from "../policy/envelope.js";
import { allDefinitions, EnvelopeError, resolveEnvelope } from "../policy/envelope-parse.js";
import { loadPrograms, ProgramLoadError } from "../policy/programs.js";
import { parseSettings } from "../config/settings.js";
import { agentToolsets, TOOLS } from "../registry.js";
import { printJson, UsageError } from "./options.js";

export function registerConfig(program: Command): void {
  const config = program.command("config").description("check agents.toml");
  config
    .command("check")
    .description("validate agents.toml and print the resolved envelope's rules in order")
    .argument("[file]", "the file to check (default: LATCH_CONFIG, else ~/.config/latch/agents.toml)")
    .option("--envelope <name>", "the envelope to print (default: the agent's, else auto_edit)")
    .option("--agent <name>", "a named profile from the file")
    .option("--config <file>", "the file to check, as the other commands take it (same as FILE)")
    .option("--json", "print JSON")
    .action(
      (arg: string | undefined, flags: { envelope?: string; agent?: string; json?: boolean; config?: string }) => {
        if (arg !== undefined && flags.config !== undefined && arg !== flags.config)
          throw new UsageError(`Give the file once: \`${arg}\` or --config \`${flags.config}\`, not both.`);
        const file = arg ?? flags.config;
        const path = chooseConfigPath(file).file;
        const cfg = loadConfig(file);
        if (flags.agent !== undefined && !(flags.agent in cfg.agents))
          throw new ConfigError(
            `${path}: unknown agent \`${flags.agent}\`; the file defines: ${Object.keys(cfg.agents).join(", ") || "no agents"}.`,
          );
        // What `latch mcp --agent` would refuse at start: a clash between the agent's keys and the global
        // ones (an agent's _timeout over a global _max_timeout), a toolset that does not exist.
        parseSettings(cfg, flags.agent);
        agentToolsets(cfg, flags.agent);
        const name = flags.envelope ?? (flags.agent ? cfg.agents[flags.agent].envelope : undefined) ?? DEFAULT_ENVELOPE;
        const defs = allDefinitions(cfg.envelopes ?? {});
        let env;
        try {
          env = resolveEnvelope(name, defs);
        } catch (err) {
          if (err instanceof EnvelopeError) throw new ConfigError(`${path}: ${err.message}.`);
          throw err;
        }
        let programs;
        try {
          programs = loadPrograms(cfg.policyPrograms ?? []);
        } catch (err) {
          if (err instanceof ProgramLoadError) throw new ConfigError(err.message);
          throw err;
        }
        const rules = describeEnvelope(env, TOOLS);
        if (flags.json) {
          printJson({
            file: cfg.file ?? null,
            sha256: cfg.sha256 ?? null,
            envelope: env.name,
            chain: env.chain,
            timeout: env.timeout,
            rules,
            envelopes: Object.keys(defs),
            policy_programs: programs,
          });
          return;
        }
        const out = [
          `${cfg.file ? `${path}: ok` : `${path}: not found; using the defaults`} (sha256 ${cfg.sha256 ?? "-"})`,
          `envelopes: ${Object.keys(defs).join(", ")}`,
          `policy programs: ${programs.length ? programs.map((p) => `${p.path} (sha256 ${p.sha256})`).join(", ") : "none"}`,
          "",
          `envelope ${env.name}${env.chain.length > 1 ? ` (extends ${env.chain.slice(1).join(" → ")})` : ""}: ${env.description}`,
          `approvals wait ${env.timeout} s, then deny`,
          "rules, first match wins:",
          ...rules.map((r) => `  ${r}`),
        ];
        process.stdout.write(out.join("\n") + "\n");
      },
    );
}
