// latch/openai-agents with a custom Model (the SDK's Model interface, scripted, offline): a read; an
// edit approved with state.approve() after the interruption lands byte-exact; an edit rejected through
// rejectCall() gives the model latch's reason; an edit approved after the file changed is refused.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  Agent,
  Runner,
  Usage,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents-core";
import { latchApprovals, latchTools, rejectCall } from "../../src/adapters/openai-agents.js";
import { AFTER, BEFORE, EDIT, SNEAKED, scene, type Scene } from "./scene.js";

const scenes: Scene[] = [];
after(() => scenes.forEach((s) => s.fx.cleanup()));

const call = (callId: string, name: string, args: unknown): AgentOutputItem[] => [
  { type: "function_call", callId, name, arguments: JSON.stringify(args), status: "completed" },
];
const say = (text: string): AgentOutputItem[] => [
  { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] },
];

/** A Model that answers from a script, one reply per turn, and keeps every request it was sent. */
class Scripted implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly replies: AgentOutputItem[][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    return { usage: new Usage(), output: this.replies.shift() ?? say("done") };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("these tests do not stream");
  }
  /** What the model was last sent as the output of a call. */
  seen(callId: string): string {
    const input = this.requests.at(-1)!.input;
    const item = Array.isArray(input)
      ? input.find((i) => i.type === "function_call_result" && i.callId === callId)
      : undefined;
    assert.ok(item, `the model never saw the output of ${callId}`);
    return JSON.stringify(item);
  }
}

const runner = new Runner({ tracingDisabled: true });

/** The model reads the file, then asks to edit it: the run stops with the SDK's interruption. */
async function toApproval(s: Scene) {
  const tools = latchTools(s.host, { session: "o" });
  const model = new Scripted([call("r1", "read_file", { path: "notes.txt" }), call("e1", "edit_file", EDIT)]);
  const agent = new Agent({ name: "fixer", instructions: "fix files", model, tools });
  const r = await runner.run(agent, "fix notes.txt");
  assert.equal(r.interruptions?.length, 1, "the run stops for the person");
  const item = r.interruptions[0];
  const shown = latchApprovals(tools).pending("e1");
  assert.ok(shown);
  assert.match(shown.diff!, /-two\n\+TWO/);
  assert.equal(s.disk(), BEFORE);
  return { tools, model, agent, state: r.state, item };
}

test("openai-agents: read_file's content reaches the model as the function call's output", async () => {
  const s = await scene("latch-oa-read-");
  scenes.push(s);
  const model = new Scripted([call("r1", "read_file", { path: "notes.txt" }), say("read it")]);
  const agent = new Agent({ name: "reader", model, tools: latchTools(s.host, { session: "o" }) });
  const r = await runner.run(agent, "read notes.txt");
  assert.equal(r.finalOutput, "read it");
  assert.match(model.seen("r1"), /one\\\\ntwo\\\\nthree/);
});

test("openai-agents: an edit approved with state.approve() lands byte-exact", async () => {
  const s = await scene("latch-oa-yes-");
  scenes.push(s);
  const { tools, model, agent, state, item } = await toApproval(s);
  state.approve(item);
  const r = await runner.run(agent, state);
  assert.equal(r.finalOutput, "done");
  assert.equal(s.disk(), AFTER);
  assert.doesNotMatch(model.seen("e1"), /Refused/);
  assert.match(String(latchApprovals(tools).display("e1")?.diff), /-two\n\+TWO/);
  const d = s.decisions("edit_file").at(-1)!;
  assert.equal(d.final, "allow");
  assert.match(d.reason, /approved by the person, in the OpenAI Agents SDK's approval step/);
});

test("openai-agents: an edit rejected through rejectCall() gives the model latch's reason, logged", async () => {
  const s = await scene("latch-oa-no-");
  scenes.push(s);
  const { tools, model, agent, state, item } = await toApproval(s);
  await rejectCall(tools, state, item, "wrong file");
  await runner.run(agent, state);
  assert.match(model.seen("e1"), /Refused: This call needs a person's approval: .*wrong file/);
  assert.equal(s.disk(), BEFORE);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});

test("openai-agents: attack: the file changes while the person looks, then state.approve(): refused, new bytes stay", async () => {
  const s = await scene("latch-oa-moved-");
  scenes.push(s);
  const { model, agent, state, item } = await toApproval(s);
  s.sneak();
  state.approve(item);
  await runner.run(agent, state);
  assert.match(model.seen("e1"), /Refused: .*(bytes moved since the preview|changed since you read it)/);
  assert.equal(s.disk(), SNEAKED);
  assert.equal(s.decisions("edit_file").at(-1)!.final, "deny");
});
