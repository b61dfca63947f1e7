// The filtering proxy's rules (src/sandbox/proxy/filter.ts), driven over real loopback sockets the way
// the in-box bridge hands them over: CONNECT and plain HTTP to granted names only, `*.name` grants,
// url_fetch's address rules after resolution (a name with one private answer among public ones is
// refused: the rebinding setup), and the test hook mapping only the names it names.
import assert from "node:assert/strict";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { CallProxy, type NetworkGrant } from "../../src/sandbox/proxy/filter.js";
import { domainMatches } from "../../src/sandbox/proxy/grant.js";

let upstream: http.Server;
let upPort: number;
const hits: string[] = [];
before(async () => {
  upstream = http.createServer((req, res) => {
    hits.push(String(req.headers.host));
    res.end("upstream\n");
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upPort = (upstream.address() as AddressInfo).port;
});
after(() => upstream.close());

/** A loopback listener whose every connection goes to `proxy.accept`, as the bridge's do; closed after use. */
async function through(
  grant: NetworkGrant,
  resolve: (h: string) => Promise<string[]>,
  send: (port: number) => Promise<string>,
) {
  const proxy = new CallProxy(grant, resolve);
  const front = net.createServer((s) => proxy.accept(s));
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  try {
    const answer = await send((front.address() as AddressInfo).port);
    return { answer, report: proxy.report() };
  } finally {
    front.close();
  }
}

/** The proxy's first response line (and body, for a refusal) to one raw request. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => s.write(text));
    let got = "";
    s.on("data", (d) => {
      got += d.toString("latin1");
      if (got.includes("\r\n\r\n") && !got.startsWith("HTTP/1.1 200 Connection")) s.end();
      if (got.startsWith("HTTP/1.1 200 Connection") && got.includes("upstream")) s.end();
    });
    s.on("close", () => resolve(got));
    s.on("error", reject);
  });
}

const mapped = () => new Map([["registry.test", { address: "127.0.0.1", port: upPort }]]);
const noDns = async (h: string): Promise<string[]> => {
  throw new Error(`no resolver in this test (${h})`);
};

test("CONNECT to a name outside the grant is refused with a 403 naming it; to the granted one it tunnels", async () => {
  const before = hits.length;
  const { answer, report } = await through({ domains: ["registry.test"], testHosts: mapped() }, noDns, (p) =>
    raw(p, "CONNECT other.test:443 HTTP/1.1\r\nhost: other.test:443\r\n\r\n"),
  );
  assert.match(answer, /^HTTP\/1\.1 403 Forbidden/);
  assert.match(answer, /latch: network to other\.test refused: not granted for this call/);
  assert.deepEqual(report.refused, [{ host: "other.test", why: "not granted for this call" }]);
  const ok = await through({ domains: ["registry.test"], testHosts: mapped() }, noDns, (p) =>
    raw(
      p,
      "CONNECT registry.test:80 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nhost: registry.test\r\nconnection: close\r\n\r\n",
    ),
  );
  assert.match(ok.answer, /^HTTP\/1\.1 200 Connection Established[\s\S]*upstream/);
  assert.deepEqual(ok.report.reached, ["registry.test"]);
  assert.equal(hits.length, before + 1);
});

test("a granted name with one private address among public ones is refused (DNS rebinding), before any connection", async () => {
  const { answer, report } = await through(
    { domains: ["*.example.org"] },
    async () => ["93.184.216.34", "127.0.0.1"],
    (p) => raw(p, "GET http://pkg.example.org/x HTTP/1.1\r\nhost: pkg.example.org\r\n\r\n"),
  );
  assert.match(answer, /^HTTP\/1\.1 403/);
  assert.deepEqual(report.refused, [{ host: "pkg.example.org", why: "127.0.0.1 is a loopback address" }]);
});

test("'any' (a person granted \"network\") still refuses private addresses and IP literals of private ranges", async () => {
  const { report } = await through(
    { domains: "any" },
    async () => ["10.0.0.7"],
    async (p) => {
      await raw(p, "GET http://intranet.example/ HTTP/1.1\r\nhost: intranet.example\r\n\r\n");
      await raw(p, "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n");
      return "";
    },
  );
  assert.deepEqual(report.refused, [
    { host: "169.254.169.254", why: "169.254.169.254 is a link-local (cloud metadata lives here) address" },
    { host: "intranet.example", why: "10.0.0.7 is a private address" },
  ]);
  assert.deepEqual(report.reached, []);
});

test("*.name grants the names under it, not the name itself or a name merely ending alike", () => {
  assert.equal(domainMatches("*.pythonhosted.org", "files.pythonhosted.org"), true);
  assert.equal(domainMatches("*.pythonhosted.org", "pythonhosted.org"), false);
  assert.equal(domainMatches("*.pythonhosted.org", "evilpythonhosted.org"), false);
  assert.equal(domainMatches("registry.test", "REGISTRY.test"), true);
});
