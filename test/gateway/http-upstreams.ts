// Upstreams the gateway reaches over HTTP, started by the test on loopback: an MCP server over the
// SDK's StreamableHTTPServerTransport (stateless, a server per request), and a small REST API with
// its OpenAPI document. Each counts the requests that reached it, so a test can show that a call
// latch refused never arrived; each has the same attacks as the stdio hostile fixture: a secret in
// the answer, a hang, an error, a huge body.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { TOKEN } from "./gateway-fixture.js";

export interface Upstream {
  url: string;
  /** Each request that reached it: method, path, the headers it carried, its body. */
  seen: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** A key format the disclosure gate knows, beside the configured token. */
export const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";
const MB = 1024 * 1024;

async function listen(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Upstream["seen"] = [];
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      open.add(res);
      res.on("close", () => open.delete(res));
      handle(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      for (const r of open) r.destroy(); // the hang's answer, never sent
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const obj = (props = {}) => ({ type: "object", properties: props });
const TOOLS = [
  { name: "echo", description: "Echoes its text.", inputSchema: obj({ text: { type: "string" } }) },
  { name: "secret", description: "Returns a secret.", inputSchema: obj() },
  { name: "hang", description: "Never answers.", inputSchema: obj() },
  { name: "fail", description: "Answers with isError.", inputSchema: obj() },
  { name: "big", description: "Returns many bytes.", inputSchema: obj({ mb: { type: "number" } }) },
  { name: "headers", description: "Says which headers it got.", inputSchema: obj() },
];

/** The MCP server over streamable HTTP, at `<url>/mcp`. */
export async function startMcpHttp(): Promise<Upstream> {
  const up = await listen((req, res, body) => {
    if (req.method !== "POST") {
      res.writeHead(405).end(); // stateless: no event stream to open
      return;
    }
    const headers = req.headers;
    const server = new Server({ name: "web", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      const a = r.params.arguments ?? {};
      const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
      switch (r.params.name) {
        case "echo":
          return text(`web echo: ${String(a.text)}`);
        case "secret":
          return text(`token ${TOKEN} and key ${AWS_KEY}`);
        case "hang":
          return new Promise<never>(() => undefined);
        case "fail":
          return { ...text("it went wrong upstream"), isError: true };
        case "big":
          return text("x".repeat(Number(a.mb) * MB));
        case "headers":
          return text(`authorization: ${String(headers.authorization)}`);
        default:
          throw new Error(`no tool ${r.params.name}`);
      }
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    void server
      .connect(transport)
      .then(() => transport.handleRequest(req, res, JSON.parse(body)))
      .catch(() => res.destroy());
  });
  return { ...up, url: `${up.url}/mcp` };
}

/** A pet store: its OpenAPI 3.1 document (with `$ref`s) and the API itself. */
export async function startPetApi(): Promise<Upstream & { spec: string }> {
  const pets = new Map([["1", { id: "1", name: "Rex" }]]);
  const up = await listen((req, res, body) => {
    const u = new URL(req.url ?? "/", "http://x");
    const json = (code: number, v: unknown) =>
      res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(v));
    const m = /^\/pets\/([^/]+)$/.exec(u.pathname);
    if (req.method === "GET" && u.pathname === "/pets")
      return json(200, { pets: [...pets.values()], limit: u.searchParams.get("limit") });
    if (req.method === "GET" && m)
      return pets.has(m[1]) ? json(200, pets.get(m[1])) : json(404, { error: "no such pet" });
    if (req.method === "POST" && u.pathname === "/pets") {
      const pet = JSON.parse(body) as { name: string };
      pets.set(String(pets.size + 1), { id: String(pets.size + 1), name: pet.name });
      return json(201, { id: String(pets.size), name: pet.name, auth: req.headers.authorization });
    }
    if (req.method === "DELETE" && m) {
      pets.delete(m[1]);
      return json(200, { deleted: m[1] });
    }
    if (u.pathname === "/secret") return json(200, { token: TOKEN, key: AWS_KEY });
    if (u.pathname === "/hang") return; // never answers
    if (u.pathname === "/boom") return json(500, { error: "the database is on fire" });
    if (u.pathname === "/huge") {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(MB, "y");
      let sent = 0;
      const more = () => {
        while (sent < 50 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end();
      };
      return more();
    }
    json(404, { error: "not found" });
  });
  return { ...up, spec: petSpec() };
}

/** The document, as a user keeps it: YAML, OpenAPI 3.1, schemas by `$ref`. */
export function petSpec(extra = ""): string {
  return `openapi: 3.1.0
info: { title: Pets, version: "1.0" }
paths:
  /pets:
    get:
      operationId: listPets
      summary: Lists the pets.
      parameters:
        - { name: limit, in: query, schema: { type: integer, minimum: 1 } }
      responses: { "200": { description: ok } }
    post:
      operationId: createPet
      summary: Adds a pet.
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/NewPet" }
      responses: { "201": { description: made } }
  /pets/{petId}:
    parameters:
      - { name: petId, in: path, required: true, schema: { type: string } }
    get:
      operationId: getPet
      responses: { "200": { description: ok } }
    delete:
      operationId: deletePet
      responses: { "200": { description: gone } }
  /secret:
    get: { operationId: getSecret, responses: { "200": { description: ok } } }
  /hang:
    get: { operationId: hang, responses: { "200": { description: never } } }
  /boom:
    get: { operationId: boom, responses: { "500": { description: fails } } }
  /huge:
    get: { operationId: huge, responses: { "200": { description: big } } }
${extra}components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties: { name: { type: string, minLength: 1 } }
      additionalProperties: false
`;
}
