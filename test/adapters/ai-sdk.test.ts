// latch/ai-sdk with the AI SDK's own offline model (MockLanguageModelV3 from ai/test): a read; an edit
// approved through the SDK's tool-approval flow lands byte-exact; a denied edit gives the model latch's
// reason; an edit approved after the file changed is refused and the new bytes stay.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { generateText, stepCountIs, type ModelMessage, type ToolSet } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { approvalResponse, latchApprovals, latchTools } from "../../src/adapters/ai-sdk.js";
import { AFTER, BEFORE, EDIT, SNEAKED, scene, type Scene } from "./scene.js";

const scenes: Scene[] = [];
after(() => scenes.forEach((s) => s.fx.cleanup()));

// The mock's own types (the provider package's are not a dependency of this repo).
type LanguageModelV3CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];
type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const call = (id: string, toolName: string, args: unknown): LanguageModelV3GenerateResult => ({
  content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(args) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
});
const text = (t: string): LanguageModelV3GenerateResult => ({
  content: [{ type: "text", text: t }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: [],
});

/** A model that answers from a script, one reply per step, and keeps every prompt it was sent. */
function scripted(replies: LanguageModelV3GenerateResult[]) {
  const model = new MockLanguageModelV3({ doGenerate: async () => replies.shift() ?? text("done") });
  return { model, prompts: () => model.doGenerateCalls.map((c: LanguageModelV3CallOptions) => c.prompt) };
}

/** What the model was sent as the result of a tool call, in the last prompt. */
function seenResult(prompts: LanguageModelV3CallOptions["prompt"][], id: string): unknown {
  for (const m of prompts.at(-1)!)
    if (m.role === "tool")
      for (const p of m.content) if (p.type === "tool-result" && p.toolCallId === id) return p.output;
  assert.fail(`the model never saw a result for ${id}`);
}

/** The model reads the file, then asks to edit it: the run stops at the SDK's approval request. */
async function toApproval(s: Scene, tools: ToolSet) {
  const first = scripted([call("r1", "read_file", { path: "notes.txt" }), call("e1", "edit_file", EDIT)]);
  const messages: ModelMessage[] = [{ role: "user", content: "fix notes.txt" }];
  const r = await generateText({ model: first.model, tools, messages, stopWhen: stepCountIs(5) });
  const req = r.content.find((p) => p.type === "tool-approval-request");
  assert.ok(req, `no approval request: ${JSON.stringify(r.content)}`);
  assert.equal(req.toolCall.toolCallId, "e1");
  const shown = latchApprovals(tools).pending("e1");
  assert.ok(shown, "the diff waits for the person");
  assert.match(shown.diff!, /-two\n\+TWO/);
  assert.equal(s.disk(), BEFORE, "nothing is written while the person looks");
  return { req, messages: [...messages, ...r.response.messages] };
}

async function answer(tools: ToolSet, history: ModelMessage[], reply: ModelMessage) {
  const second = scripted([text("ok")]);
  await generateText({ model: second.model, tools, messages: [...history, reply], stopWhen: stepCountIs(3) });
  return seenResult(second.prompts(), "e1") as { type: string; value?: unknown; reason?: string };
}

test("ai-sdk: read_file's content reaches the model as the tool result", async () => {
  const s = await scene("latch-ai-read-");
  scenes.push(s);
  const tools = latchTools(s.host, { session: "a" });
  const m = scripted([call("r1", "read_file", { path: "notes.txt" }), text("read it")]);
  const r = await generateText({ model: m.model, tools, prompt: "read notes.txt", stopWhen: stepCountIs(3) });
  assert.equal(r.text, "read it");
  const seen = seenResult(m.prompts(), "r1") as { type: string; value: { content: string } };
  assert.equal(seen.type, "json");
  assert.match(JSON.stringify(seen.value), /one\\ntwo\\nthree/);
});

test("ai-sdk: an edit approved through the SDK's tool-approval-response lands byte-exact", async () => {
  const s = await scene("latch-ai-yes-");
  scenes.push(s);
  const tools = latchTools(s.host, { session: "a" });
  const { req, messages } = await toApproval(s, tools);
  const reply: ModelMessage = { role: "tool", content: [await approvalResponse(tools, req, true)] };
  const seen = await answer(tools, messages, reply);
  assert.equal(seen.type, "json", JSON.stringify(seen));
  assert.equal(s.disk(), AFTER);
  assert.match(String(latchApprovals(tools).display("e1")?.diff), /-two\n\+TWO/, "the diff is display data");
  assert.doesNotMatch(JSON.stringify(seen), /\+TWO/, "the model is not sent the display diff");
  const d = s.decisions("edit_file");
  assert.equal(d.at(-1)!.final, "allow");
  assert.match(d.at(-1)!.reason, /approved by the person, in the AI SDK's approval step/);
});

test("ai-sdk: a denied edit gives the model latch's reason, and the deny is on the log", async () => {
  const s = await scene("latch-ai-no-");
  scenes.push(s);
  const tools = latchTools(s.host, { session: "a" });
  const { req, messages } = await toApproval(s, tools);
  const reply: ModelMessage = { role: "tool", content: [await approvalResponse(tools, req, false, "wrong file")] };
  const seen = await answer(tools, messages, reply);
  assert.equal(seen.type, "execution-denied");
  assert.match(seen.reason!, /^Refused: This call needs a person's approval: .*wrong file/);
  assert.equal(s.disk(), BEFORE);
  const d = s.decisions("edit_file");
  assert.equal(d.at(-1)!.final, "deny");
});

test("ai-sdk: attack: the file changes while the person looks, then they approve: refused, the new bytes stay", async () => {
  const s = await scene("latch-ai-moved-");
  scenes.push(s);
  const tools = latchTools(s.host, { session: "a" });
  const { req, messages } = await toApproval(s, tools);
  s.sneak();
  const reply: ModelMessage = { role: "tool", content: [await approvalResponse(tools, req, true)] };
  const seen = await answer(tools, messages, reply);
  assert.equal(seen.type, "text", JSON.stringify(seen));
  assert.match(String(seen.value), /^Refused: .*(bytes moved since the preview|changed since you read it)/);
  assert.equal(s.disk(), SNEAKED);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});

test('ai-sdk: approvals "latch": the SDK never asks; the host\'s approver decides inside the call', async () => {
  const s = await scene("latch-ai-latch-");
  scenes.push(s);
  const tools = latchTools(s.host, { session: "a", approvals: "latch" });
  const m = scripted([call("r1", "read_file", { path: "notes.txt" }), call("e1", "edit_file", EDIT), text("ok")]);
  const r = await generateText({ model: m.model, tools, prompt: "fix", stopWhen: stepCountIs(5) });
  assert.equal(r.content.filter((p) => p.type === "tool-approval-request").length, 0);
  const seen = seenResult(m.prompts(), "e1") as { type: string; value: string };
  assert.match(seen.value, /^Refused: This call needs a person's approval: .*no approver is available/);
  assert.equal(s.disk(), BEFORE);
});
