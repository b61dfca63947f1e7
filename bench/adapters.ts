// What an SDK adapter adds to one call (issue 34): read_file through each adapter's own tool object,
// as its SDK invokes it in framework-approval mode (the "needs approval?" step, which runs
// host.prepare, then the tool's execute and the result shaped for the model), against a direct
// host.call of the same read in the same process, interleaved. No model: the SDK's loop around the
// tool is the same with or without latch.
// Run: node --import tsx bench/adapters.ts [--no-write]
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { RunContext } from "@openai/agents-core";
import { createHost } from "../src/host/create-host.js";
import { latchTools as aiTools } from "../src/adapters/ai-sdk.js";
import { latchApprovals, latchTools as lcTools } from "../src/adapters/langchain.js";
import { latchTools as oaTools } from "../src/adapters/openai-agents.js";
import { latchTools as maTools } from "../src/adapters/mastra.js";
import { measuredLine, noiseNote, percentile, publish, watchLoad } from "./report.js";

const CALLS = Number(process.env.LATCH_BENCH_CALLS ?? 2000);
const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-bench-adapters-")));
const root = path.join(base, "ws");
const load = watchLoad();

async function main(): Promise<void> {
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, "notes.txt"), "one\ntwo\nthree\n".repeat(50));
  const host = await createHost({
    root,
    stateDir: path.join(base, "state"),
    config: { toolsPolicies: {}, agents: {} },
    envelope: "default",
    env: { PATH: process.env.PATH ?? "", HOME: base },
  });
  const args = { path: "notes.txt" };
  const session = "bench";
  const ai = aiTools(host, { session });
  const oa = oaTools(host, { session }).find((t) => t.name === "read_file")!;
  const lc = lcTools(host, { session });
  const lcRead = lc.find((t) => t.name === "read_file")!;
  const ma = maTools(host, { session }).read_file;
  const ctx = new RunContext();
  let n = 0;
  const paths: Record<string, () => Promise<unknown>> = {
    "direct host.call": () => host.call("read_file", args, { session }),
    "host.prepare alone (the needs-approval step)": () => host.prepare("read_file", args, { session }),
    "AI SDK (latch/ai-sdk)": async () => {
      const id = `a${n++}`;
      const t = ai.read_file;
      const opts = { toolCallId: id, messages: [] };
      if (typeof t.needsApproval === "function") await t.needsApproval(args, opts);
      const out = await t.execute!(args, opts);
      return t.toModelOutput!({ toolCallId: id, input: args, output: out });
    },
    "OpenAI Agents (latch/openai-agents)": async () => {
      const id = `o${n++}`;
      await oa.needsApproval(ctx, args, id);
      const toolCall = {
        type: "function_call" as const,
        callId: id,
        name: "read_file",
        arguments: JSON.stringify(args),
      };
      return oa.invoke(ctx, toolCall.arguments, { toolCall });
    },
    "LangChain (latch/langchain)": async () => {
      const id = `l${n++}`;
      await latchApprovals(lc).needsApproval(id, "read_file", args); // what latchMiddleware's `when` runs
      return lcRead.invoke({ type: "tool_call", id, name: "read_file", args });
    },
    "Mastra (latch/mastra)": async () => {
      // As Mastra's agent loop calls a tool: the input, the call's id, a suspend function (unused for a read).
      const id = `m${n++}`;
      const suspend = () => Promise.resolve();
      return ma.execute!({ context: args, suspend } as never, { toolCallId: id, messages: [] });
    },
  };
  const names = Object.keys(paths);
  const times: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (const k of names) for (let i = 0; i < 50; i++) await paths[k](); // warm up
  for (let i = 0; i < CALLS; i++) {
    for (const k of names) {
      const t0 = performance.now();
      await paths[k]();
      times[k].push(performance.now() - t0);
    }
  }
  load.stop();
  host.close();
  rmSync(base, { recursive: true, force: true });
  const direct = percentile(times["direct host.call"], 50);
  const rows = names.map((k) => {
    const p50 = percentile(times[k], 50);
    const p90 = percentile(times[k], 90);
    const over = k.startsWith("direct") || k.startsWith("host.prepare") ? "—" : `${(p50 - direct).toFixed(3)} ms`;
    return `| ${k} | ${p50.toFixed(3)} ms | ${p90.toFixed(3)} ms | ${over} |`;
  });
  const body = [
    measuredLine("node --import tsx bench/adapters.ts", load),
    "",
    `read_file of a 700-byte file, ${CALLS} calls per path, the paths interleaved call by call; in-process, policy log and ledger on (envelope default: reads run). Each adapter path is what its SDK runs per call in framework-approval mode: the "needs approval?" step (host.prepare: steps 1–5 without running; for Mastra inside the tool, before it would suspend), then the tool's execute through host.call, and the result shaped for the model.`,
    "",
    "| path | p50 | p90 | overhead at p50 over direct |",
    "|---|---|---|---|",
    ...rows,
    "",
    `The "needs approval?" step decides the call once more before the SDK runs it (host.prepare, its own row); with \`approvals: "latch"\` it is skipped. ${noiseNote(load)}`,
  ].join("\n");
  publish("adapters", "Agent SDK adapters: the cost per call over a direct host.call", body);
}

await main();
