// Flags shared by the commands that build a host, normalised in one place.
import type { Command } from "commander";
import { createHost, type Host } from "../host/create-host.js";

export interface HostFlags {
  root?: string;
  config?: string;
  agent?: string;
  stateDir?: string;
}

export function addHostFlags(cmd: Command): Command {
  return cmd
    .option("--root <dir>", "workspace folder (default: the current folder)")
    .option("--config <file>", "agents.toml to use (default: LATCH_CONFIG, else ~/.config/latch/agents.toml)")
    .option("--agent <name>", "a named profile from agents.toml")
    .option("--state-dir <dir>", "where latch keeps its ledger and locks (default: LATCH_STATE_DIR, else the XDG state dir)");
}

export function hostFromFlags(flags: HostFlags): Promise<Host> {
  return createHost({ root: flags.root ?? process.cwd(), configPath: flags.config, agent: flags.agent, stateDir: flags.stateDir });
}

/** Parse a JSON_ARGS operand: an object, "-" for standard input, or nothing for {}. */
export async function readJsonArgs(raw: string | undefined): Promise<unknown> {
  if (raw === undefined) return {};
  const text = raw === "-" ? await readStdin() : raw;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`JSON_ARGS is not valid JSON (${(err as Error).message}). Pass an object such as '{"path": "README.md"}', or - to read it from standard input.`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`Expected \`JSON_ARGS\` to be a JSON object, got \`${text.slice(0, 60)}\`.`);
  }
  return value;
}

export class UsageError extends Error {}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + "\n");
}
