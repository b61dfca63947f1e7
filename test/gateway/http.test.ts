// Upstreams over HTTP through the one call path: an MCP server by `url` (the SDK's streamable HTTP
// server, started here on loopback) and an OpenAPI service (a REST API on loopback and its spec file).
// Each tool is listed as `<name>__<tool>`, decided by the envelope (a deny holds: the upstream never
// sees the request), its answer redacted and bounded, its failures errors, and a private address is
// reached only when the config names the host.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { deniedOutright } from "../../src/policy/outright.js";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CLI, runCli } from "../helpers/cli.js";
import { stdioClient } from "../helpers/mcp.js";
import { AWS_KEY, petSpec, startMcpHttp, startPetApi, type Upstream } from "./http-upstreams.js";
import { TOKEN, envelope, gatewayFixture, text } from "./gateway-fixture.js";

const fx = gatewayFixture("latch-gw-http-");
let web: Upstream;
let api: Upstream & { spec: string };
let specFile: string;
before(async () => {
  web = await startMcpHttp();
  api = await startPetApi();
  specFile = path.join(fx.base, "pets.yaml");
  writeFileSync(specFile, api.spec);
});
after(async () => {
  await web.close();
  await api.close();
  fx.cleanup();
});

const webServer = (...lines: string[]) =>
  ["[mcp_servers.web]", `url = ${JSON.stringify(web.url)}`, ...lines, ""].join("\n");
const pets = (...lines: string[]) =>
  ["[openapi.pets]", `spec = ${JSON.stringify(specFile)}`, `base_url = ${JSON.stringify(api.url)}`, ...lines, ""].join(
    "\n",
  );
const INSPECTOR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../node_modules/.bin/mcp-inspector");
const LOOPBACK = 'private_hosts = ["127.0.0.1"]';
/** How many tools/call requests reached the MCP server. */
const webCalls = () => web.seen.filter((r) => r.body.includes('"tools/call"')).length;

describe("an MCP server by url, over streamable HTTP", () => {
  test("each tool is listed as web__<tool> and runs where the envelope allows; a header is sent by reference", async () => {
    const h = await fx.attach(
      webServer(LOOPBACK, 'headers = { Authorization = "env:LATCH_FIXTURE_TOKEN" }') + envelope({ "web__*": "allow" }),
    );
    const names = h
      .tools()
      .filter((t) => t.axis === "attached")
      .map((t) => t.name);
    assert.deepEqual(names.sort(), ["web__big", "web__echo", "web__fail", "web__hang", "web__headers", "web__secret"]);
    assert.match(
      h.tools().find((t) => t.name === "web__echo")!.description,
      /^\[attached: `echo` of the MCP server `web`/,
    );
    const out = await h.call("web__echo", { text: "over http" });
    assert.equal(out.status, "ok", text(out));
    assert.match(text(out), /web echo: over http/);
    // The header reached the server with the referenced value; echoed back, the value is redacted.
    const said = await h.call("web__headers", {});
    assert.match(text(said), /authorization: .*REDACTED/);
    assert.ok(!text(said).includes(TOKEN));
    assert.ok(
      web.seen.some((r) => r.headers.authorization === TOKEN),
      "the server got the configured header",
    );
  });

  test("an envelope deny holds for an HTTP server's tool: refused, and no request reaches the server", async () => {
    const h = await fx.attach(webServer(LOOPBACK) + envelope({ web__echo: "allow", "web__*": "deny" }));
    const before = webCalls();
    for (const name of ["web__secret", "web__big", "web__hang", "web__fail"]) {
      const out = await h.call(name, {});
      assert.equal(out.status, "refused", `${name}: ${text(out)}`);
    }
    assert.equal(webCalls(), before, "0 bypasses: no denied call reached the server");
    assert.equal((await h.call("web__echo", { text: "allowed" })).status, "ok");
    assert.equal(webCalls(), before + 1);
  });

  test("a secret in an HTTP server's answer is redacted: the configured token and a key format", async () => {
    const h = await fx.attach(webServer(LOOPBACK) + envelope({ "web__*": "allow" }));
    const out = await h.call("web__secret", {});
    assert.equal(out.status, "ok");
    assert.ok(!text(out).includes(TOKEN) && !text(out).includes(AWS_KEY), text(out));
    assert.match(text(out), /REDACTED/);
  });

  test("a hang is a timeout, an isError an error, a 20 MB answer refused past max_message_bytes (16 MiB); latch keeps serving", async () => {
    const h = await fx.attach(webServer(LOOPBACK, "timeout_s = 2") + envelope({ "web__*": "allow" }));
    const hang = await h.call("web__hang", {});
    assert.equal(hang.status, "error");
    assert.match(text(hang), /ETIMEDOUT.*did not answer within 2 s/);
    assert.match(text(await h.call("web__fail", {})), /EUPSTREAM.*it went wrong upstream/);
    const big = await fx.attach(webServer(LOOPBACK, "timeout_s = 60") + envelope({ "web__*": "allow" }));
    const flood = await big.call("web__big", { mb: 20 });
    assert.equal(flood.status, "error");
    assert.match(text(flood), /EUPSTREAM/);
    const cut = await big.call("web__big", { mb: 1 });
    assert.equal(cut.status, "ok");
    assert.ok(text(cut).length < 100_000, `${text(cut).length} bytes reached the model`);
    assert.match(text(await big.call("web__echo", { text: "still here" })), /still here/);
  });

  test("a private address the config does not name is refused: the server is never reached", async () => {
    const before = web.seen.length;
    const h = await fx.attach(webServer() + envelope({ "web__*": "allow" }));
    const status = h.gateway!.status().find((s) => s.name === "web")!;
    assert.equal(status.state, "failed");
    assert.match(status.error ?? "", /127\.0\.0\.1` is a .*address; .*add "127\.0\.0\.1" to `private_hosts`/);
    assert.equal(web.seen.length, before, "not one request reached it");
    assert.equal((await h.call("web__echo", { text: "x" })).status, "error");
  });
});

/** How many requests reached the API, of one method and path prefix. */
const apiHits = (method: string, prefix: string) =>
  api.seen.filter((r) => r.method === method && r.path.startsWith(prefix)).length;

describe("an OpenAPI service", () => {
  test("each operation is a tool pets__<operationId>; include/exclude globs choose; a description marked as the service's", async () => {
    const h = await fx.attach(pets(LOOPBACK, 'exclude = ["delete*", "h*"]') + envelope({ "pets__*": "allow" }));
    const names = h
      .tools()
      .filter((t) => t.axis === "attached")
      .map((t) => t.name);
    assert.deepEqual(names, ["pets__listPets", "pets__createPet", "pets__getPet", "pets__getSecret", "pets__boom"]);
    const only = await fx.attach(pets(LOOPBACK, 'include = ["get*"]') + envelope({}));
    assert.deepEqual(
      only
        .tools()
        .filter((t) => t.axis === "attached")
        .map((t) => t.name),
      ["pets__getPet", "pets__getSecret"],
    );
    assert.match(
      h.tools().find((t) => t.name === "pets__listPets")!.description,
      /^\[attached: `listPets` of the OpenAPI service `pets`.*\]\nGET \/pets\n\nLists the pets\./s,
    );
  });

  test("a call sends the path, query and body the arguments give, with the auth by reference; the token echoed is redacted", async () => {
    const h = await fx.attach(
      pets(LOOPBACK, 'auth = { bearer = "env:LATCH_FIXTURE_TOKEN" }') + envelope({ "pets__*": "allow" }),
    );
    const got = await h.call("pets__getPet", { petId: "1" });
    assert.equal(got.status, "ok", text(got));
    assert.match(text(got), /HTTP 200 GET \/pets\/\{petId\}.*Rex/);
    assert.match(text(await h.call("pets__listPets", { limit: 2 })), /\\"limit\\":\\"2\\"/);
    const made = await h.call("pets__createPet", { body: { name: "Tom" } });
    assert.equal(made.status, "ok", text(made));
    assert.match(text(made), /Tom/);
    assert.ok(!text(made).includes(TOKEN), "the auth the API echoed is redacted");
    const post = api.seen.filter((r) => r.method === "POST").at(-1)!;
    assert.equal(post.headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(JSON.parse(post.body), { name: "Tom" });
    assert.equal(post.headers["content-type"], "application/json");
  });

  test("arguments are checked against the operation's parameters and body schema before anything is sent", async () => {
    const h = await fx.attach(pets(LOOPBACK) + envelope({ "pets__*": "allow" }));
    const posts = apiHits("POST", "/pets");
    const gets = apiHits("GET", "/pets");
    for (const [tool, args] of [
      ["pets__createPet", { body: {} }],
      ["pets__createPet", { body: { name: "Tom", owner: "x" } }],
      ["pets__listPets", { limit: 0 }],
      ["pets__getPet", {}],
      ["pets__getPet", { petId: "1", extra: true }],
    ] as const) {
      const out = await h.call(tool, args);
      assert.equal(out.status, "error", `${tool} ${JSON.stringify(args)}: ${text(out)}`);
      assert.match(text(out), /EINVAL/);
    }
    assert.equal(apiHits("POST", "/pets"), posts);
    assert.equal(apiHits("GET", "/pets"), gets);
  });

  test("an envelope deny holds for an OpenAPI operation: refused, unlisted, no request sent", async () => {
    const h = await fx.attach(pets(LOOPBACK) + envelope({ pets__deletePet: "deny", "pets__*": "allow" }));
    const del = h.tools().find((t) => t.name === "pets__deletePet")!;
    assert.ok(deniedOutright(h.envelope, del), "denied whatever its arguments: MCP clients are not shown it");
    const before = apiHits("DELETE", "/pets");
    const out = await h.call("pets__deletePet", { petId: "1" });
    assert.equal(out.status, "refused");
    assert.match(text(out), /tools\.\\"pets__deletePet\\" = deny/);
    assert.equal(apiHits("DELETE", "/pets"), before, "0 bypasses: the DELETE never reached the API");
    const ex = await h.explain("pets__getPet", { petId: "1" });
    assert.equal(ex.decision, "allow");
  });

  test("a secret in the answer is redacted; a hang times out, a 500 is an error, a 50 MB body is cut; latch keeps serving", async () => {
    const h = await fx.attach(pets(LOOPBACK, "timeout_s = 2") + envelope({ "pets__*": "allow" }));
    const secret = await h.call("pets__getSecret", {});
    assert.equal(secret.status, "ok");
    assert.ok(!text(secret).includes(TOKEN) && !text(secret).includes(AWS_KEY), text(secret));
    assert.match(text(secret), /REDACTED/);
    const hang = await h.call("pets__hang", {});
    assert.equal(hang.status, "error");
    assert.match(text(hang), /ETIMEDOUT.*did not answer within 2 s/);
    const boom = await h.call("pets__boom", {});
    assert.equal(boom.status, "error");
    assert.match(text(boom), /EUPSTREAM.*HTTP 500.*the database is on fire/);
    const huge = await h.call("pets__huge", {});
    assert.equal(huge.status, "ok", text(huge));
    assert.ok(text(huge).length < 100_000, `${text(huge).length} bytes reached the model`);
    assert.match(text(huge), /cut by latch/);
    assert.match(text(await h.call("pets__getPet", { petId: "1" })), /Rex/);
  });

  test("a base_url at a private address the config does not name is refused: the API is never reached", async () => {
    const h = await fx.attach(pets() + envelope({ "pets__*": "allow" }));
    const before = api.seen.length;
    const out = await h.call("pets__getPet", { petId: "1" });
    assert.equal(out.status, "error");
    assert.match(text(out), /latch did not send it: .*127\.0\.0\.1.* is a .*address.*private_hosts/);
    assert.equal(api.seen.length, before);
  });

  test("attack: a spec whose $ref names a URL is not fetched: the service is refused naming the $ref", async () => {
    const remote = path.join(fx.base, "remote-ref.yaml");
    writeFileSync(
      remote,
      petSpec().replace('$ref: "#/components/schemas/NewPet"', `$ref: "${api.url}/schemas.yaml#/NewPet"`),
    );
    const before = api.seen.length;
    const h = await fx.attach(pets(LOOPBACK).replace(JSON.stringify(specFile), JSON.stringify(remote)) + envelope({}));
    const status = h.gateway!.status().find((s) => s.name === "pets")!;
    assert.equal(status.state, "failed");
    assert.match(status.error ?? "", /cannot be read: .*schemas\.yaml.*latch fetches no \$ref by URL/);
    assert.equal(api.seen.length, before, "no request for the $ref");
    // The same through a second local file the spec refers to, and to a public name (the parser's own
    // guard stops only private addresses, and it would look this one up).
    writeFileSync(path.join(fx.base, "more.yaml"), `NewPet:\n  $ref: "https://schemas.example.test/pet.yaml"\n`);
    const chained = path.join(fx.base, "chained-ref.yaml");
    writeFileSync(chained, petSpec().replace('$ref: "#/components/schemas/NewPet"', '$ref: "./more.yaml#/NewPet"'));
    const h2 = await fx.attach(
      pets(LOOPBACK).replace(JSON.stringify(specFile), JSON.stringify(chained)) + envelope({}),
    );
    const s2 = h2.gateway!.status().find((s) => s.name === "pets")!;
    assert.equal(s2.state, "failed");
    assert.match(
      s2.error ?? "",
      /more\.yaml has a \$ref to "https:\/\/schemas\.example\.test\/pet\.yaml": latch fetches no \$ref/,
    );
  });

  test("a changed spec is refused with the diff until `latch servers approve`; a moved operation is a changed one", async () => {
    const state = path.join(fx.base, "pins-state");
    const h = await fx.attach(pets(LOOPBACK) + envelope({ "pets__*": "allow" }), { stateDir: state });
    assert.equal((await h.call("pets__getPet", { petId: "1" })).status, "ok");
    await h.shutdown("spec changes");
    // The operator's file changes: getPet gains a query parameter.
    writeFileSync(
      specFile,
      api.spec.replace(
        "operationId: getPet",
        "operationId: getPet\n      parameters: [{ name: full, in: query, schema: { type: boolean } }]",
      ),
    );
    try {
      const changed = await fx.attach(pets(LOOPBACK) + envelope({ "pets__*": "allow" }), { stateDir: state }, false);
      assert.ok(!changed.tools().some((t) => t.name === "pets__getPet"), "a changed operation is not listed");
      assert.ok(
        changed.tools().some((t) => t.name === "pets__listPets"),
        "the others stay",
      );
      const refused = await changed.call("pets__getPet", { petId: "1" });
      assert.equal(refused.status, "refused");
      assert.match(text(refused), /changed since it was approved.*latch servers approve pets/);
      assert.match(text(refused), /\+\s+\\"full\\"/);
      await changed.approveServer("pets");
      assert.equal((await changed.call("pets__getPet", { petId: "1", full: true })).status, "ok");
      await changed.shutdown("approved");
      // The same operationId moved to another method and path: changed, with both in the diff.
      writeFileSync(specFile, petSpec().replace("/secret:\n    get:", "/secret:\n    post:"));
      const moved = await fx.attach(pets(LOOPBACK) + envelope({ "pets__*": "allow" }), { stateDir: state }, false);
      const out = await moved.call("pets__getSecret", {});
      assert.equal(out.status, "refused");
      assert.match(text(out), /-\s+\\"method\\": \\"GET\\".*\+\s+\\"method\\": \\"POST\\"/s);
    } finally {
      writeFileSync(specFile, api.spec);
    }
  });
});

describe("through latch mcp, by the SDK's client", () => {
  test("HTTP and OpenAPI tools are listed as <name>__<tool>, run or refused by the envelope, logged; the log verifies", async () => {
    const config = path.join(fx.base, "http-mcp.toml");
    const log = path.join(fx.base, "http-mcp.jsonl");
    writeFileSync(
      config,
      webServer(LOOPBACK) +
        pets(LOOPBACK, 'auth = { bearer = "env:LATCH_FIXTURE_TOKEN" }') +
        envelope({ web__echo: "allow", web__secret: "deny", pets__getPet: "allow", pets__getSecret: "allow" }),
    );
    const at = ["--root", fx.root, "--state-dir", fx.state, "--config", config];
    const env = { HOME: fx.home, LATCH_APPROVAL_WAIT: "0", LATCH_FIXTURE_TOKEN: TOKEN };
    for (const server of ["web", "pets"]) {
      const approved = await runCli(["servers", "approve", server, ...at], { env });
      assert.equal(approved.code, 0, approved.stdout + approved.stderr);
    }
    const client = await stdioClient([...at, "--envelope", "gw", "--policy-log", log], undefined, env);
    const secretsBefore = webCalls();
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const n of ["read_file", "web__echo", "pets__getPet", "pets__createPet"]) assert.ok(names.includes(n), n);
      assert.ok(!names.includes("web__secret"), "denied outright: not listed");
      const echoed = await client.callTool({ name: "web__echo", arguments: { text: "via latch mcp" } });
      assert.ok(!echoed.isError, JSON.stringify(echoed));
      assert.match(JSON.stringify(echoed.content), /web echo: via latch mcp/);
      const pet = await client.callTool({ name: "pets__getPet", arguments: { petId: "1" } });
      assert.ok(!pet.isError, JSON.stringify(pet));
      assert.match(JSON.stringify(pet.content), /Rex/);
      const secret = await client.callTool({ name: "pets__getSecret", arguments: {} });
      assert.ok(!JSON.stringify(secret.content).includes(TOKEN), "redacted on the way to the client");
      const denied = await client.callTool({ name: "web__secret", arguments: {} });
      assert.equal(denied.isError, true);
      assert.match(JSON.stringify(denied.content), /Refused: .*tools\.\\"web__secret\\" = deny/);
      // Not named: default_action (approve), and this client cannot be asked.
      const unnamed = await client.callTool({ name: "pets__createPet", arguments: { body: { name: "Mo" } } });
      assert.equal(unnamed.isError, true);
      assert.match(JSON.stringify(unnamed.content), /Refused: .*default_action = approve/);
    } finally {
      await client.close();
    }
    assert.equal(webCalls(), secretsBefore + 1, "only the allowed call reached the MCP server");
    assert.ok(
      !api.seen.some((r) => r.method === "POST" && r.body.includes("Mo")),
      "the unapproved POST was never sent",
    );
    const verify = await runCli(["log", "verify", "--state-dir", fx.state, log]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const records = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).record as { type: string; tool?: string; final?: string });
    const decided = records.filter((r) => r.type === "effect_decision").map((r) => [r.tool, r.final]);
    for (const row of [
      ["web__echo", "allow"],
      ["pets__getPet", "allow"],
      ["web__secret", "deny"],
      ["pets__createPet", "deny"],
    ])
      assert.ok(
        decided.some((d) => d[0] === row[0] && d[1] === row[1]),
        `${row.join(" ")} in ${JSON.stringify(decided)}`,
      );
  });
  test("the MCP Inspector CLI calls an HTTP server's tool and an OpenAPI operation through latch mcp; a deny holds", async () => {
    const config = path.join(fx.base, "http-inspector.toml");
    const logs: string[] = []; // one run of latch mcp per Inspector call, each with its own log
    writeFileSync(
      config,
      webServer(LOOPBACK) +
        pets(LOOPBACK) +
        envelope({ web__echo: "allow", web__secret: "deny", pets__getPet: "allow" }),
    );
    const at = ["--root", fx.root, "--state-dir", fx.state, "--config", config];
    const env = { ...process.env, HOME: fx.home, LATCH_APPROVAL_WAIT: "0", LATCH_CONFIG: config };
    for (const server of ["web", "pets"])
      assert.equal((await runCli(["servers", "approve", server, ...at], { env })).code, 0);
    // The Inspector takes `--config` for itself: latch reads its config from LATCH_CONFIG here.
    const server = [process.execPath, CLI, "mcp", "--root", fx.root, "--state-dir", fx.state];
    const call = async (tool: string, ...args: string[]) => {
      const log = path.join(fx.base, `http-inspector-${logs.length + 1}.jsonl`);
      logs.push(log);
      const argv = ["--cli", ...server, "--envelope", "gw", "--policy-log", log, "--method", "tools/call"];
      const out = await promisify(execFile)(INSPECTOR, [...argv, "--tool-name", tool, ...args], {
        cwd: fx.base,
        env,
        timeout: 60_000,
      }).catch((err: Error & { stderr?: string }) => {
        throw new Error(`${err.message}\n${err.stderr ?? ""}`);
      });
      return JSON.parse(out.stdout) as { isError?: boolean; content: { text: string }[] };
    };
    const before = webCalls();
    const echoed = await call("web__echo", "--tool-arg", "text=via inspector");
    assert.equal(echoed.isError, undefined, JSON.stringify(echoed));
    assert.match(echoed.content[0].text, /web echo: via inspector/);
    const pet = await call("pets__getPet", "--tool-arg", "petId=1");
    assert.equal(pet.isError, undefined, JSON.stringify(pet));
    assert.match(pet.content[0].text, /Rex/);
    const denied = await call("web__secret");
    assert.equal(denied.isError, true, JSON.stringify(denied));
    assert.match(denied.content[0].text, /Refused: .*web__secret/);
    assert.equal(webCalls(), before + 1, "the denied call never reached the server");
    for (const log of logs) {
      const verify = await runCli(["log", "verify", "--state-dir", fx.state, log]);
      assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    }
  });
});
