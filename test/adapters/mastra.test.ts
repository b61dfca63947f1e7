// latch/mastra with a Mastra agent over the AI SDK's offline model (MockLanguageModelV2 from ai v5's
// ai/test, the model version Mastra 0.24 runs): a read; an edit approved by resuming the suspended
// tool call lands byte-exact; a denied edit gives the model latch's reason; an edit approved after the
// file changed is refused.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { simulateReadableStream } from "ai-v5";
import { MockLanguageModelV2 } from "ai-v5/test";
import { latchApprovals, latchTools } from "../../src/adapters/mastra.js";
import { AFTER, BEFORE, EDIT, SNEAKED, scene, type Scene } from "./scene.js";

const scenes: Scene[] = [];
after(() => scenes.forEach((s) => s.fx.cleanup()));

type Part = Record<string, unknown>;
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const call = (toolCallId: string, toolName: string, args: unknown): Part[] => [
  { type: "stream-start", warnings: [] },
  { type: "tool-call", toolCallId, toolName, input: JSON.stringify(args) },
  { type: "finish", finishReason: "tool-calls", usage },
];
const say = (text: string): Part[] => [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: text },
  { type: "text-end", id: "t" },
  { type: "finish", finishReason: "stop", usage },
];

/** A model that streams from a script, one reply per step, and keeps every prompt it was sent. */
function scripted(replies: Part[][]) {
  const prompts: unknown[] = [];
  const model = new MockLanguageModelV2({
    doStream: async (o) => {
      prompts.push(o.prompt);
      return { stream: simulateReadableStream({ chunks: (replies.shift() ?? say("done")) as never[] }) };
    },
  });
  return { model, lastPrompt: () => JSON.stringify(prompts.at(-1)) };
}

async function chunksOf(stream: { fullStream: AsyncIterable<unknown> }): Promise<{ type: string; payload?: any }[]> {
  const out: { type: string; payload?: any }[] = [];
  for await (const c of stream.fullStream) out.push(c as { type: string; payload?: any });
  return out;
}

function agentFor(s: Scene, replies: Part[][]) {
  const tools = latchTools(s.host, { session: "m" });
  const m = scripted(replies);
  const agent = new Agent({ name: "fixer", instructions: "fix files", model: m.model, tools });
  new Mastra({ agents: { fixer: agent }, storage: new InMemoryStore(), logger: false });
  return { tools, agent, ...m };
}

async function toSuspension(s: Scene) {
  const a = agentFor(s, [call("r1", "read_file", { path: "notes.txt" }), call("e1", "edit_file", EDIT), say("done")]);
  const out = await a.agent.stream("fix notes.txt");
  const chunks = await chunksOf(out);
  const suspended = chunks.find((c) => c.type === "tool-call-suspended");
  assert.ok(suspended, `no suspension: ${chunks.map((c) => c.type).join(", ")}`);
  assert.equal(suspended.payload.toolCallId, "e1");
  assert.match(suspended.payload.suspendPayload.diff, /-two\n\+TWO/);
  assert.ok(latchApprovals(a.tools).pending("e1"));
  assert.equal(s.disk(), BEFORE);
  return { ...a, runId: out.runId };
}

test("mastra: read_file's content reaches the model as the tool result", async () => {
  const s = await scene("latch-ma-read-");
  scenes.push(s);
  const a = agentFor(s, [call("r1", "read_file", { path: "notes.txt" }), say("read it")]);
  const out = await a.agent.stream("read notes.txt");
  await chunksOf(out);
  assert.match(a.lastPrompt(), /one\\\\ntwo\\\\nthree/);
});

test("mastra: an edit approved by resuming the suspended call lands byte-exact", async () => {
  const s = await scene("latch-ma-yes-");
  scenes.push(s);
  const a = await toSuspension(s);
  await chunksOf(await a.agent.resumeStream({ approved: true }, { runId: a.runId, toolCallId: "e1" }));
  assert.equal(s.disk(), AFTER);
  const d = s.decisions("edit_file").at(-1)!;
  assert.equal(d.final, "allow");
  assert.match(d.reason, /approved by the person, in Mastra's tool suspension/);
});

test("mastra: a denied edit gives the model latch's reason, logged", async () => {
  const s = await scene("latch-ma-no-");
  scenes.push(s);
  const a = await toSuspension(s);
  await chunksOf(
    await a.agent.resumeStream({ approved: false, reason: "wrong file" }, { runId: a.runId, toolCallId: "e1" }),
  );
  assert.match(a.lastPrompt(), /Refused: This call needs a person's approval: .*wrong file/);
  assert.equal(s.disk(), BEFORE);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});

test("mastra: attack: the file changes while the person looks, then they approve: refused, new bytes stay", async () => {
  const s = await scene("latch-ma-moved-");
  scenes.push(s);
  const a = await toSuspension(s);
  s.sneak();
  await chunksOf(await a.agent.resumeStream({ approved: true }, { runId: a.runId, toolCallId: "e1" }));
  assert.match(a.lastPrompt(), /Refused: .*(bytes moved since the preview|changed since you read it)/);
  assert.equal(s.disk(), SNEAKED);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});
