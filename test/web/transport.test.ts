// The protected transport with an injected resolver: a name that resolves privately is refused, a
// mixed answer is refused, the connection goes to the address that was checked (one lookup per hop,
// none by the socket), and a name that rebinds to a private address between redirects is refused.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Refusal, ToolError } from "../../src/errors.js";
import { protectedFetch, type Resolver } from "../../src/web/fetch.js";
import { web } from "../../src/config/web.js";
import { startServer, type TestServer } from "./server.js";

let srv: TestServer;
before(async () => {
  srv = await startServer({
    "/hello": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain" });
      r.end("hello\n");
    },
    "/again": (_q, r) => {
      r.writeHead(302, { location: "/hello" });
      r.end();
    },
  });
});
after(() => srv.close());

const allowLoopback = web.parse({ _test_allow_addresses: "127.0.0.1" });
const never = new AbortController().signal;

function scripted(answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    return answers[Math.min(calls.length - 1, answers.length - 1)];
  };
  return Object.assign(fn, { calls });
}

test("a name that resolves to a private address is refused, and nothing connects", async () => {
  const before = srv.requests.length;
  for (const answer of [["10.0.0.7"], ["169.254.169.254"], ["::1"], ["::ffff:127.0.0.1"], ["fd12::1"]]) {
    const resolve = scripted([answer]);
    await assert.rejects(
      protectedFetch(new URL(`http://evil.test:${srv.port}/hello`), web.parse({}), never, resolve),
      (err: unknown) => err instanceof Refusal && /`evil\.test` resolves to .* address/.test(err.reason),
      answer[0],
    );
  }
  assert.equal(srv.requests.length, before);
});

test("one private address among public ones refuses the name", async () => {
  const resolve = scripted([["93.184.216.34", "127.0.0.1"]]);
  await assert.rejects(
    protectedFetch(new URL(`http://mixed.test:${srv.port}/hello`), web.parse({}), never, resolve),
    (err: unknown) => err instanceof Refusal && /127\.0\.0\.1.*loopback/.test(err.reason),
  );
});

test("the connection goes to the checked address: the name itself is never looked up again", async () => {
  // `pinned.test` exists in no DNS: the fetch can only succeed by connecting to the address latch checked.
  const resolve = scripted([["127.0.0.1"]]);
  const f = await protectedFetch(new URL(`http://pinned.test:${srv.port}/hello`), allowLoopback, never, resolve);
  assert.equal(f.status, 200);
  assert.equal(f.body.toString(), "hello\n");
  assert.equal(f.address, "127.0.0.1");
  assert.deepEqual(resolve.calls, ["pinned.test"]);
  assert.equal(srv.requests.at(-1)!.headers.host, `pinned.test:${srv.port}`);
});

test("a name that rebinds to a private address on a redirect is refused at that hop", async () => {
  const resolve = scripted([["127.0.0.1"], ["10.9.9.9"]]);
  const before = srv.requests.length;
  await assert.rejects(
    protectedFetch(new URL(`http://rebind.test:${srv.port}/again`), allowLoopback, never, resolve),
    (err: unknown) => err instanceof Refusal && /10\.9\.9\.9/.test(err.reason),
  );
  assert.deepEqual(resolve.calls, ["rebind.test", "rebind.test"]);
  assert.equal(srv.requests.length, before + 1, "only the first hop reached the server");
});

test("a name that does not resolve is ENOTFOUND", async () => {
  const resolve: Resolver = async () => {
    throw new Error("queryA ENOTFOUND");
  };
  await assert.rejects(
    protectedFetch(new URL("http://nowhere.test/"), web.parse({}), never, resolve),
    (err: unknown) => err instanceof ToolError && err.code === "ENOTFOUND",
  );
});
