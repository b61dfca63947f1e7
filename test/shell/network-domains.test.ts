// The names a command will reach (src/shell/domains.ts), which a `_network = "ask"` request names and
// the proxy grants: the registry, the remote, the index, the URLs; undefined ("network") otherwise.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { localShell } from "../../src/config/toolsets.js";
import { domainsOf } from "../../src/shell/domains.js";

const localShellSettings = (raw: Record<string, string>) => localShell.parse(raw);

const base = mkdtempSync(path.join(os.tmpdir(), "latch-domains-"));
after(() => rmSync(base, { recursive: true, force: true }));
const root = path.join(base, "ws");
mkdirSync(path.join(root, "sub"), { recursive: true });
const at = (cwd = root, env: NodeJS.ProcessEnv = {}) => ({ cwd, root, env });

test("npm: --registry, then npm_config_registry, then the nearest .npmrc, else registry.npmjs.org", () => {
  assert.deepEqual(domainsOf(["npm", "install"], at()), ["registry.npmjs.org"]);
  assert.deepEqual(domainsOf(["npm", "install", "--registry", "http://registry.test/"], at()), ["registry.test"]);
  assert.deepEqual(domainsOf(["npx", "--registry=https://npm.example.org/x", "tsc"], at()), ["npm.example.org"]);
  assert.deepEqual(domainsOf(["npm", "ci"], at(root, { npm_config_registry: "https://env.example/" })), [
    "env.example",
  ]);
  writeFileSync(path.join(root, ".npmrc"), "registry = https://rc.example.org/\n");
  assert.deepEqual(domainsOf(["npm", "install"], at(path.join(root, "sub"))), ["rc.example.org"]);
  rmSync(path.join(root, ".npmrc"));
});

test("a linked .npmrc is not followed: the default registry is asked for instead", () => {
  writeFileSync(path.join(base, "elsewhere"), "registry=https://elsewhere.example/\n");
  symlinkSync(path.join(base, "elsewhere"), path.join(root, ".npmrc"));
  assert.deepEqual(domainsOf(["npm", "install"], at()), ["registry.npmjs.org"]);
  rmSync(path.join(root, ".npmrc"));
});

test("git fetch/pull/push: the URL's host, or the remote's url in .git/config; clone without a URL asks for network", () => {
  mkdirSync(path.join(root, ".git"), { recursive: true });
  writeFileSync(
    path.join(root, ".git/config"),
    '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://git.example.org/a/b.git\n[remote "up"]\n\turl = git@ssh.example.org:a/b.git\n',
  );
  assert.deepEqual(domainsOf(["git", "fetch"], at()), ["git.example.org"]);
  assert.deepEqual(domainsOf(["git", "pull", "up", "main"], at(path.join(root, "sub"))), ["ssh.example.org"]);
  assert.deepEqual(domainsOf(["git", "push", "https://other.example/x.git"], at()), ["other.example"]);
  assert.deepEqual(domainsOf(["git", "clone", "https://host.example/r.git"], at()), ["host.example"]);
  assert.equal(domainsOf(["git", "fetch", "nosuch"], at()), undefined);
  assert.equal(domainsOf(["git", "submodule", "update"], at()), undefined);
});

test("pip: --index-url and --extra-index-url, PIP_INDEX_URL, else pypi.org and files.pythonhosted.org", () => {
  assert.deepEqual(domainsOf(["pip", "install", "x"], at()), ["pypi.org", "files.pythonhosted.org"]);
  assert.deepEqual(domainsOf(["python3", "-m", "pip", "install", "-i", "https://idx.example/simple", "x"], at()), [
    "idx.example",
  ]);
  assert.deepEqual(domainsOf(["pip3", "install", "x"], at(root, { PIP_INDEX_URL: "https://env.example/s" })), [
    "env.example",
  ]);
});

test("curl and wget: the hosts of scheme:// URLs; none (or a bare word only) asks for network", () => {
  assert.deepEqual(domainsOf(["curl", "-sS", "--max-time", "20", "http://a.example/", "https://b.example/x"], at()), [
    "a.example",
    "b.example",
  ]);
  assert.equal(domainsOf(["curl", "a.example"], at()), undefined);
  assert.equal(domainsOf(["python3", "fetch.py"], at()), undefined);
});

test('_network = "ask", _network_domains and _network_test_hosts parse; bad values name the key', () => {
  const s = localShellSettings({
    _network: "ask",
    _network_domains: "Registry.npmjs.org, *.pythonhosted.org",
    _network_test_hosts: "registry.test=127.0.0.1:4873",
  });
  assert.equal(s.network, false, "ask is not the host's network");
  assert.deepEqual(s.proxied?.domains, ["registry.npmjs.org", "*.pythonhosted.org"]);
  assert.deepEqual([...s.proxied.testHosts], [["registry.test", { address: "127.0.0.1", port: 4873 }]]);
  assert.equal(localShellSettings({}).proxied, undefined, "the default: no proxy");
  assert.equal(localShellSettings({ _network: "allow", _network_domains: "a.example" }).proxied, undefined);
  assert.throws(
    () => localShellSettings({ _network: "maybe" }),
    /Expected `_network` to be \\"deny\\", \\"ask\\" or \\"allow\\", got `maybe`/,
  );
  assert.throws(() => localShellSettings({ _network_domains: "http://a.example/" }), /_network_domains/);
});
