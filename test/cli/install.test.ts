// A new user's path: the packed tarball (`npm pack`) installed into a temporary prefix puts `latch` on
// the PATH, `latch --version` answers, and `latch mcp` from there lists its tools to an MCP client.
// The registry is not reachable from every test machine, so the tarball's dependencies are the repo's
// own node_modules (linked), not a fresh download: what this checks is the package itself (its files,
// its bin, the bundle's chunks), not npm's resolution of its dependencies.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeFixture } from "../helpers/fixture.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const fx = makeFixture();
after(() => fx.cleanup());

test("npm pack, installed into a temporary prefix: latch --version, and latch mcp lists tools", async () => {
  const packDir = path.join(fx.base, "pack");
  mkdirSync(packDir);
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", packDir], { cwd: REPO, encoding: "utf8" }),
  ) as { filename: string; files: { path: string }[] }[];
  const files = packed[0].files.map((f) => f.path);
  assert.ok(files.includes("dist/cli/main.js") && files.includes("dist/cli/app.js"), "the bin and the bundle");
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("test/")), "only dist/ and the package files");

  // What `npm install -g --prefix P latch.tgz` lays out: P/lib/node_modules/latch and P/bin/latch.
  const prefix = path.join(fx.base, "prefix");
  const pkg = path.join(prefix, "lib", "node_modules", "latch");
  mkdirSync(pkg, { recursive: true });
  execFileSync("tar", ["-xzf", path.join(packDir, packed[0].filename), "-C", pkg, "--strip-components=1"]);
  symlinkSync(path.join(REPO, "node_modules"), path.join(pkg, "node_modules"));
  mkdirSync(path.join(prefix, "bin"));
  const bin = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).bin.latch as string;
  symlinkSync(path.join(pkg, bin), path.join(prefix, "bin", "latch"));
  const env = { ...process.env, PATH: `${path.join(prefix, "bin")}${path.delimiter}${process.env.PATH}` };

  const version = execFileSync("latch", ["--version"], { env, encoding: "utf8", cwd: fx.base }).trim();
  assert.equal(version, JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")).version);

  const client = new Client({ name: "new-user", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: "latch",
      args: ["mcp", "--root", fx.root, "--state-dir", fx.state],
      env: env,
      cwd: fx.base,
      stderr: "pipe",
    }),
  );
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("read_file") && names.includes("local_shell"), names.join(", "));
  } finally {
    await client.close();
  }
});
