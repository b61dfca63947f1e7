import { z } from "zod";
import { mutate } from "../edit/mutate.js";
import { mutationSummary } from "../edit/replace.js";
import { defineTool, planWrite } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedField } from "./expected.js";
import { displayWhileSyncing } from "./write-display.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("File path, relative to the workspace root. Missing folders are created."),
    content: z.string().describe("The whole new content of the file."),
    expected_sha256: expectedField(),
    dry_run: dryRunField(),
  });

/** The bytes run writes (and the approval diff shows). */
function newContent(args: z.infer<ReturnType<typeof schema>>): Buffer {
  return Buffer.from(args.content, "utf8");
}

export default defineTool({
  name: "write_file",
  aliases: ["write", "create_file"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace", "client"],
  clientNeeds: ["read", "write"],
  annotations: { readOnly: false, destructive: true, idempotent: true },
  description: [
    "Create a file, or replace a whole file, with the given content. The write is atomic: the file holds either the old or the new content, never a mix.",
    "Overwriting an existing file needs a full read_file of its current content in this session first; if it changed since, read it again.",
    "For a targeted change to an existing file, prefer edit_file.",
  ].join(" "),
  schema,
  plan: (args, env) => planWrite(args.path, env, args.expected_sha256),
  async run(args, plan, env) {
    const shown = displayWhileSyncing(plan.target);
    const out = await mutate(env.mutation, {
      target: plan.target,
      needs: "full",
      expectSha: plan.base,
      expected: plan.expected,
      createParents: true,
      apply: () => newContent(args),
      meanwhile: shown.during,
    });
    return { result: mutationSummary(plan.target, out), display: shown.after(out) };
  },
  async preview(args, plan, env) {
    return { before: await env.files.read(plan.target, env.signal), after: newContent(args), needs: "full" };
  },
});
