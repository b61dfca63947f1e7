// The canonical, ordered list of tools. Order here is the order clients list them in.
import { z } from "zod";
import { ConfigError } from "./config/error.js";
import type { Config } from "./config/load.js";
import applyPatch from "./tools/apply_patch.js";
import createDirectory from "./tools/create_directory.js";
import deleteFile from "./tools/delete_file.js";
import moveFile from "./tools/move_file.js";
import astRewritePreview from "./tools/ast_rewrite_preview.js";
import astSearch from "./tools/ast_search.js";
import type { ToolSpec } from "./tools/define.js";
import countStats from "./tools/count_stats.js";
import editFile from "./tools/edit_file.js";
import findFiles from "./tools/find_files.js";
import grep from "./tools/grep.js";
import hashEdit from "./tools/hash_edit.js";
import outline from "./tools/outline.js";
import readFile from "./tools/read_file.js";
import readManyFiles from "./tools/read_many_files.js";
import readMedia from "./tools/read_media.js";
import listDir from "./tools/list_dir.js";
import localShell from "./tools/local_shell.js";
import processInput from "./tools/process_input.js";
import processKill from "./tools/process_kill.js";
import processList from "./tools/process_list.js";
import processOutput from "./tools/process_output.js";
import runTool from "./tools/run_tool.js";
import readFileRange from "./tools/read_file_range.js";
import sed from "./tools/sed.js";
import skill from "./tools/skill.js";
import statFile from "./tools/stat_file.js";
import undo from "./tools/undo.js";
import urlFetch from "./tools/url_fetch.js";
import webSearch from "./tools/web_search.js";
import writeFile from "./tools/write_file.js";

export const TOOLS: readonly ToolSpec[] = [
  readFile,
  readFileRange,
  readManyFiles,
  readMedia,
  writeFile,
  editFile,
  applyPatch,
  sed,
  moveFile,
  deleteFile,
  undo,
  createDirectory,
  listDir,
  grep,
  findFiles,
  statFile,
  countStats,
  hashEdit,
  outline,
  astSearch,
  astRewritePreview,
  localShell,
  processOutput,
  processInput,
  processKill,
  processList,
  runTool,
  skill,
  urlFetch,
  webSearch,
];

const byName = new Map<string, ToolSpec>();
for (const t of TOOLS) {
  for (const n of [t.name, ...t.aliases]) {
    if (byName.has(n)) throw new Error(`registry: the name \`${n}\` is used twice`);
    byName.set(n, t);
  }
}

/** A tool by its name or one of its aliases. */
export function findTool(name: string): ToolSpec | undefined {
  return byName.get(name);
}

/** The tool a call names: one of `listed` (the host's, attached ones included) by name or alias, else the registry's. */
export function toolNamed(listed: readonly ToolSpec[], name: string): ToolSpec | undefined {
  return listed.find((t) => t.name === name || t.aliases.includes(name)) ?? findTool(name);
}

/** The built-in toolsets, and the attached ones: every `[mcp_servers.X]` tool is of `mcp_servers`, every `[openapi.X]` one of `openapi`. */
const TOOLSETS: readonly string[] = [...new Set(TOOLS.map((t) => t.toolset)), "mcp_servers", "openapi"];

/** The toolsets an agent profile limits itself to (`agents.X.tools`), each checked to exist; undefined: all. */
export function agentToolsets(config: Config, agent: string | undefined): readonly string[] | undefined {
  const wanted = agent === undefined ? undefined : config.agents[agent]?.tools;
  for (const name of wanted ?? []) {
    if (!TOOLSETS.includes(name)) {
      throw new ConfigError(
        `${config.file ?? "agents.toml"}: \`agents.${agent}.tools\` names the unknown toolset \`${name}\`; this version has: ${TOOLSETS.join(", ")}.`,
      );
    }
  }
  return wanted;
}

// Set by scripts/bundle.mjs in the bundled CLI: each tool's inputSchema, computed at build time from
// this same registry (zod takes ~60 ms for all of them at startup). Undefined everywhere else. A JSON
// string, not an object: esbuild would initialise an object define in every module of the bundle,
// and so load it into the entry that answers --version.
declare const LATCH_INPUT_SCHEMAS: string | undefined;
const precomputed =
  typeof LATCH_INPUT_SCHEMAS === "undefined"
    ? undefined
    : (JSON.parse(LATCH_INPUT_SCHEMAS) as Record<string, Record<string, unknown>>);

/** The JSON Schema the model sees for a tool's arguments. */
export function inputSchema(tool: ToolSpec): Record<string, unknown> {
  if (tool.inputJsonSchema) return structuredClone(tool.inputJsonSchema);
  const built = precomputed?.[tool.name];
  if (built) return structuredClone(built);
  const schema = z.toJSONSchema(tool.schema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}
