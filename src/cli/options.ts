// Flags shared by the commands that build a host, normalised in one place.
import type { Command } from "commander";
import { createHost, type Host, type HostOptions } from "../host/create-host.js";
import path from "node:path";
import { isLogFolder, newRunLog, parseRetention } from "./log-files.js";
import { parsePosture, type Posture } from "../policy/programs.js";

export interface HostFlags {
  root?: string;
  config?: string;
  agent?: string;
  stateDir?: string;
  state?: string;
  envelope?: string;
  policy?: string[];
  policyLog?: string;
  defaultAuthorization?: string;
  policyEvidence?: boolean;
  policyEvidenceSeal?: string;
  logSync?: string;
  logRetention?: string;
  shape?: string;
}

/** `postureDefault`: what --default-authorization's help names as the default (latch mcp's differs). */
export function addHostFlags(cmd: Command, postureDefault = "deny-unless-allowed"): Command {
  return cmd
    .option("--root <dir>", "workspace folder (default: the current folder)")
    .option("--config <file>", "agents.toml to use (default: LATCH_CONFIG, else ~/.config/latch/agents.toml)")
    .option("--agent <name>", "a named profile from agents.toml")
    .option(
      "--shape <shape>",
      "workspace (default: every tool, on this machine) or host (the browse tools only: nothing is written, nothing runs)",
    )
    .option(
      "--state-dir <dir>",
      "where latch keeps its ledger and locks (default: LATCH_STATE_DIR, else the XDG state dir)",
    )
    .option(
      "--state <url>",
      "a fleet's PostgreSQL (postgres://…) for the approval queue and a copy of the policy log, with signed checkpoints (default: LATCH_STATE_URL, else the state dir's SQLite)",
    )
    .option(
      "--envelope <name>",
      "approval rules: read_only, default, auto_edit, strict, ask_always or one from agents.toml (default: the agent's, else auto_edit)",
    )
    .option(
      "--policy <program>",
      "a policy program to consult on every call (repeatable)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      "--policy-log <file|dir>",
      "a new file for the policy log; or an existing folder (or a path ending in /): a new file there for every run, named by time and pid (default: a new file in the state dir's logs/)",
    )
    .option(
      "--log-retention <days|size>",
      "prune older run logs in the --policy-log folder (or the state dir's logs/) at startup: 30d keeps 30 days, 50MB keeps the newest up to 50 MB (default: keep all)",
    )
    .option(
      "--default-authorization <posture>",
      `what a call becomes when every policy program abstains: allow-unless-forbidden or deny-unless-allowed (default: ${postureDefault}); needs --policy and --policy-log`,
    )
    .option(
      "--policy-evidence",
      "put raw requests and results in the policy log, not only their hashes (treat the log as sensitive)",
    )
    .option(
      "--policy-evidence-seal <public-key.pem>",
      "with evidence, also keep each result the disclosure gate redacted or withheld whole, encrypted to this X25519 public key (open with `latch log unseal --key`)",
    )
    .option(
      "--log-sync <when>",
      "which decisions are fsynced before their call runs: effects (calls that can change something; a read's is synced within 100 ms) or all (default: effects)",
    );
}

export async function hostFromFlags(flags: HostFlags, extra: Partial<HostOptions> = {}): Promise<Host> {
  const retention = flags.logRetention === undefined ? undefined : parseRetention(flags.logRetention);
  const logDir =
    flags.policyLog !== undefined && isLogFolder(flags.policyLog) ? path.resolve(flags.policyLog) : undefined;
  const policyLog = logDir ? newRunLog(logDir) : flags.policyLog;
  let posture: Posture | undefined;
  if (flags.defaultAuthorization !== undefined) {
    try {
      posture = parsePosture(flags.defaultAuthorization, "--default-authorization");
    } catch (err) {
      throw new UsageError((err as Error).message + ".");
    }
    if (!flags.policyLog)
      throw new UsageError("--default-authorization needs a fresh --policy-log FILE, so its decisions are on record.");
  }
  const shape = flags.shape ?? "workspace";
  // The client shape needs a connected ACP client: it is the library's (createHost({shape: "client", acp})).
  if (shape !== "workspace" && shape !== "host")
    throw new UsageError(
      `Expected \`--shape\` to be workspace or host, got \`${shape}\`. The client shape needs an ACP client: see docs/library.md.`,
    );
  const logSync = flags.logSync ?? "effects";
  if (logSync !== "effects" && logSync !== "all")
    throw new UsageError(`Expected \`--log-sync\` to be effects or all, got \`${logSync}\`.`);
  const host = await createHost({
    root: flags.root ?? process.cwd(),
    configPath: flags.config,
    agent: flags.agent,
    shape,
    stateDir: flags.stateDir,
    ...(flags.state !== undefined ? { stateUrl: flags.state } : {}),
    envelope: flags.envelope,
    policyPrograms: flags.policy,
    policyLog,
    ...(logDir ? { policyLogDir: logDir } : {}),
    posture,
    policyEvidence: flags.policyEvidence === true,
    ...(flags.policyEvidenceSeal !== undefined ? { policyEvidenceSeal: flags.policyEvidenceSeal } : {}),
    logSync,
    ...(retention ? { logRetention: retention } : {}),
    ...extra,
  });
  return host;
}

/** Parse a JSON_ARGS operand: an object, "-" for standard input, or nothing for {}. */
export async function readJsonArgs(raw: string | undefined): Promise<unknown> {
  if (raw === undefined) return {};
  const text = raw === "-" ? await readStdin() : raw;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `JSON_ARGS is not valid JSON (${(err as Error).message}). Pass an object such as '{"path": "README.md"}', or - to read it from standard input.`,
    );
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
