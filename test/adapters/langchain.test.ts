// latch/langchain with LangChain's own fake tool-calling model (fakeModel() from @langchain/core/testing)
// in createAgent with latchMiddleware() (the human-in-the-loop middleware): a read; an edit approved
// by resuming the interrupt lands byte-exact; an edit rejected through rejectDecision() gives the model
// latch's reason; an edit approved after the file changed is refused.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { latchApprovals, latchMiddleware, latchTools, rejectDecision } from "../../src/adapters/langchain.js";
import { AFTER, BEFORE, EDIT, SNEAKED, scene, type Scene } from "./scene.js";

const scenes: Scene[] = [];
after(() => scenes.forEach((s) => s.fx.cleanup()));

/** What the model was last sent as the ToolMessage of a call. */
function seen(model: ReturnType<typeof fakeModel>, id: string): { content: string; artifact?: unknown } {
  const messages: BaseMessage[] = model.calls.at(-1)!.messages;
  const m = messages.find((x) => x.type === "tool" && (x as { tool_call_id?: string }).tool_call_id === id);
  assert.ok(m, `the model never saw the result of ${id}`);
  return {
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
    artifact: (m as { artifact?: unknown }).artifact,
  };
}

async function toInterrupt(s: Scene) {
  const tools = latchTools(s.host, { session: "l" });
  const model = fakeModel()
    .respondWithTools([{ name: "read_file", args: { path: "notes.txt" }, id: "r1" }])
    .respondWithTools([{ name: "edit_file", args: EDIT, id: "e1" }])
    .respond(new AIMessage("done"));
  const agent = createAgent({ model, tools, middleware: [latchMiddleware(tools)], checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "t1" } };
  const r = await agent.invoke({ messages: [{ role: "user", content: "fix notes.txt" }] }, config);
  const interrupts = (
    r as { __interrupt__?: { value: { actionRequests: { name: string; description?: string }[] } }[] }
  ).__interrupt__;
  assert.equal(interrupts?.length, 1, "the agent stops for the person");
  const asked = interrupts[0].value.actionRequests[0];
  assert.equal(asked.name, "edit_file");
  assert.match(asked.description!, /-two\n\+TWO/, "the person sees the exact diff");
  assert.ok(latchApprovals(tools).pending("e1"));
  assert.equal(s.disk(), BEFORE);
  return { tools, model, agent, config };
}

test("langchain: read_file's content reaches the model in the ToolMessage; the CallResult is its artifact", async () => {
  const s = await scene("latch-lc-read-");
  scenes.push(s);
  const tools = latchTools(s.host, { session: "l" });
  const model = fakeModel()
    .respondWithTools([{ name: "read_file", args: { path: "notes.txt" }, id: "r1" }])
    .respond(new AIMessage("read it"));
  const agent = createAgent({ model, tools });
  await agent.invoke({ messages: [{ role: "user", content: "read notes.txt" }] });
  const m = seen(model, "r1");
  assert.match(m.content, /one\\ntwo\\nthree/);
  assert.equal((m.artifact as { status: string }).status, "ok");
});

test("langchain: an edit approved by resuming the interrupt lands byte-exact", async () => {
  const s = await scene("latch-lc-yes-");
  scenes.push(s);
  const { model, agent, config } = await toInterrupt(s);
  await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
  assert.equal(s.disk(), AFTER);
  const m = seen(model, "e1");
  assert.doesNotMatch(m.content, /Refused/);
  assert.match(String((m.artifact as { display?: { diff?: string } }).display?.diff), /-two\n\+TWO/);
  const d = s.decisions("edit_file").at(-1)!;
  assert.equal(d.final, "allow");
  assert.match(d.reason, /approved by the person, in LangChain's human-in-the-loop step/);
});

test("langchain: an edit rejected through rejectDecision() gives the model latch's reason, logged", async () => {
  const s = await scene("latch-lc-no-");
  scenes.push(s);
  const { tools, model, agent, config } = await toInterrupt(s);
  const reject = await rejectDecision(tools, "e1", "wrong file");
  await agent.invoke(new Command({ resume: { decisions: [reject] } }), config);
  assert.match(seen(model, "e1").content, /Refused: This call needs a person's approval: .*wrong file/);
  assert.equal(s.disk(), BEFORE);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});

test("langchain: attack: the file changes while the person looks, then they approve: refused, new bytes stay", async () => {
  const s = await scene("latch-lc-moved-");
  scenes.push(s);
  const { model, agent, config } = await toInterrupt(s);
  s.sneak();
  await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
  assert.match(seen(model, "e1").content, /Refused: .*(bytes moved since the preview|changed since you read it)/);
  assert.equal(s.disk(), SNEAKED);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});
