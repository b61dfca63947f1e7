// One MCP server session over a host: tools/list from the registry, tools/call through host.call,
// progress, cancellation and approvals by elicitation. The transport (stdio or HTTP) is the caller's.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  type InitializeResult,
  type Tool,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import type { Approver } from "../../approval/approver.js";
import type { Host } from "../../host/create-host.js";
import { CLIENT_ARGUMENTS, dropClientArguments } from "../../host/args.js";
import { findTool } from "../../registry.js";
import type { Progress } from "../../tools/define.js";
import { log } from "../log.js";
import { whileRunning } from "../../host/inflight.js";
import { queueApprover } from "../../approval/queue.js";
import { sessionApprover } from "./elicit.js";
import { serveSkillPrompts } from "./prompts.js";
import { listTools } from "./tool-list.js";
import { CAPABILITIES, SERVER_INFO } from "./handshake.js";
import { toCallToolResult } from "./results.js";
import { GUIDANCE, instructionsFor } from "./instructions.js";
import { approvalWaitFromEnv } from "./approval-wait.js";

/** The guidance without the workspace line (tests, docs); sessions send instructionsFor(host, clientRoots). */
const INSTRUCTIONS = GUIDANCE.join("\n");

export interface McpSessionOptions {
  /** The host, or a promise of it (stdio waits for the client's roots before making one). */
  host: Host | Promise<Host>;
  /** The ledger session this MCP session reads and writes under. */
  session: string;
  /** `--yes`: the host's approver decides; the client is never asked. */
  approveAll?: boolean;
  /** Seconds a call that needs approval waits on the queue (`latch approvals`) when the client cannot ask; 0: no wait. */
  approvalWaitS?: number;
  /** The roots come from the client after initialize (stdio without --root): the instructions say how. */
  clientRoots?: boolean;
  /** Calls and listings wait for it: the client's roots in force (stdio follows roots/list_changed). */
  rootsSettled?: () => Promise<void>;
  /** Called once the client has initialized, with the server (for roots). */
  onInitialized?: (server: Server) => void;
  /** Told the tools each tools/list answered with (stdio keeps the first for the next start). */
  onListed?: (tools: Tool[]) => void;
}

export function createMcpSession(opts: McpSessionOptions): McpSession {
  const validator = lazyValidator();
  const server = new Server(
    { ...SERVER_INFO },
    {
      capabilities: structuredClone(CAPABILITIES),
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: validator,
    },
  );
  const hostReady = Promise.resolve(opts.host);
  let approver: Approver | undefined; // one per MCP session: it holds the session's "allow for this session" grants
  server.oninitialized = () => opts.onInitialized?.(server);
  // The config can change the envelope and the tools mid-run (watch-config.ts): the client lists again.
  // The listener goes with the session (HTTP opens and expires many): the host must not keep it.
  let unsubscribe: (() => void) | undefined;
  let closed = false;
  server.onclose = () => {
    closed = true;
    unsubscribe?.();
  };
  void hostReady.then((host) => {
    if (closed) return;
    unsubscribe = host.onReload(() => {
      server.sendToolListChanged().catch((err: Error) => log("debug", `tools/list_changed not sent: ${err.message}`));
    });
  });
  // The instructions name the workspace: known now over HTTP and with --root; over stdio without
  // --root it comes from the client's roots, which can only be asked for after initialize.
  const initialize = (server as unknown as { _oninitialize(r: unknown): Promise<InitializeResult> })._oninitialize.bind(
    server,
  );
  server.setRequestHandler(InitializeRequestSchema, async (req) => {
    const result = await initialize(req);
    const known = await Promise.race([hostReady, new Promise<undefined>((r) => setImmediate(() => r(undefined)))]);
    return { ...result, instructions: instructionsFor(known, opts.clientRoots === true) };
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools = await listTools(await hostReady, opts.session);
    opts.onListed?.(tools);
    return { tools };
  });
  serveSkillPrompts(server, hostReady, opts.session);

  const callTool = async (params: CallToolRequest["params"], extra: CallExtra): Promise<CallToolResult> => {
    const host = await hostReady;
    await opts.rootsSettled?.();
    const token = params._meta?.progressToken;
    const onProgress =
      token === undefined
        ? undefined
        : (p: Progress) => {
            extra
              .notify({
                method: "notifications/progress",
                params: { progressToken: token, progress: p.progress, total: p.total, message: p.message },
              })
              .catch((err: Error) => log("debug", `progress notification not sent: ${err.message}`));
          };
    approver ??= opts.approveAll
      ? undefined
      : sessionApprover({
          server,
          queueWaitS: opts.approvalWaitS ?? approvalWaitFromEnv(),
          queue: (onQueued) =>
            queueApprover(host.store.approvals, { workspace: host.workspace, down: () => host.store.down }, onQueued),
          stateDir: host.state.dir,
          ...(host.store.kind === "postgres" ? { stateUrl: host.store.where } : {}),
          beforeAsk: () => validator.load(),
        });
    const started = Date.now();
    const spec = findTool(params.name);
    const { args, dropped } = dropClientArguments(spec, params.arguments ?? {});
    if (dropped.length)
      log("info", `${params.name}: ignored ${dropped.map((k) => `\`${k}\` (${CLIENT_ARGUMENTS[k]})`).join(", ")}`);
    // The model is told who approved a call a person was asked about (the console, a terminal, the client).
    let approvedBy: string | undefined;
    const asked = approver;
    const out = await host.call(params.name, args, {
      session: opts.session,
      signal: extra.signal,
      cancel: extra.cancel,
      onProgress,
      answerFirst: true,
      approver: asked && {
        name: asked.name,
        request: async (r, s) => {
          const a = await asked.request(r, s);
          approvedBy = a.approved ? `${a.by}${a.scope === "session" ? ", for this session" : ""}` : undefined;
          return a;
        },
      },
    });
    log("info", `${params.name} → ${out.status} in ${Date.now() - started} ms (session ${opts.session})`);
    const result = toCallToolResult(out, { structured: spec?.outputSchema !== undefined });
    if (out.status === "ok" && approvedBy) result.content.push({ type: "text", text: `Approved by ${approvedBy}.` });
    return result;
  };
  // The calls this session runs, from the client's request on (a call waiting for the client's roots
  // too): a client that closes stdin after its requests is answered first (stdio.ts).
  const running = new Set<Promise<CallToolResult>>();
  const trackedCall = (params: CallToolRequest["params"], extra: CallExtra): Promise<CallToolResult> => {
    const call = callTool(params, extra);
    running.add(call);
    const forget = () => void running.delete(call);
    call.then(forget, forget);
    return call;
  };
  server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
    trackedCall(req.params, { signal: extra.signal, notify: (n) => extra.sendNotification(n) }),
  );
  // An initialize the stdio server answered before the SDK was loaded (early.ts): the Server learns the
  // client's capabilities (roots, elicitation) from it as from its own, through the SDK's own schema.
  const adoptInitialize = (request: unknown): boolean => {
    const parsed = InitializeRequestSchema.safeParse(request);
    if (parsed.success) void initialize(parsed.data);
    return parsed.success;
  };
  const callsEnded = (waitMs: number) => whileRunning(() => [...running], waitMs);
  return { server, callTool: trackedCall, adoptInitialize, callsEnded };
}

/** What a tool call needs of the request it came in: how it is cancelled, and a way to send it progress. */
interface CallExtra {
  /** The SDK's request signal; the stdio wire's direct path gives `cancel` instead (direct-calls.ts). */
  signal?: AbortSignal;
  cancel?: (abort: (reason?: unknown) => void) => void;
  notify(notification: ServerNotification): Promise<void>;
}

export interface McpSession {
  server: Server;
  /** tools/call: the SDK's handler and the stdio wire's direct path (direct-calls.ts) both run this. */
  callTool: (params: CallToolRequest["params"], extra: CallExtra) => Promise<CallToolResult>;
  /** Takes in an initialize answered without the SDK; false if its schema refuses it. */
  adoptInitialize: (request: unknown) => boolean;
  /** Resolves once none of this session's tools/call is running, or after `waitMs`. */
  callsEnded: (waitMs: number) => Promise<void>;
}

/**
 * The SDK checks elicitation answers with Ajv, whose loading and setup cost startup time: it is
 * imported (a chunk of its own in the bundle) before the first approval form is sent, not at start.
 */
function lazyValidator(): jsonSchemaValidator & { load(): Promise<void> } {
  let ajv: jsonSchemaValidator | undefined;
  return {
    async load() {
      if (ajv) return;
      const { AjvJsonSchemaValidator } = await import("@modelcontextprotocol/sdk/validation/ajv");
      ajv ??= new AjvJsonSchemaValidator();
    },
    getValidator(schema) {
      if (!ajv) throw new Error("latch: the elicitation validator was used before it was loaded");
      return ajv.getValidator(schema);
    },
  };
}
