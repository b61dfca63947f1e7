// A new user's path: the packed tarball (`npm pack`) installed for real by npm into a temporary
// prefix puts `latch` there (node_modules/.bin), `latch --version` answers, and `latch mcp` from there
// lists its tools and reads a file (SQLite and all). The install is offline: npm takes every dependency
// from its cache, which `npm ci` filled (CI runs it first). `npm install -g --offline latch.tgz` would
// need the registry's package documents too, which `npm ci` never fetches; so the prefix gets a lockfile
// made from the repo's (its non-dev entries, and latch from the tarball) and `npm ci --offline` installs
// from it. better-sqlite3's install script would fetch a prebuilt binary from the network, or compile
// SQLite for minutes: it is handed the binary `npm ci` built, as a local prebuild (prebuild-install's
// `local-prebuilds`), and installs from that.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, type ToolResult } from "../helpers/mcp.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const fx = makeFixture();
after(() => fx.cleanup());

test("npm pack, npm install of the tarball into a temporary prefix (offline): latch --version, latch mcp", async () => {
  const packDir = path.join(fx.base, "pack");
  mkdirSync(packDir);
  // The suite built dist/ before it started: `prepare` (a rebuild) would rewrite it under the other tests.
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], {
      cwd: REPO,
      encoding: "utf8",
    }),
  ) as { filename: string; files: { path: string }[] }[];
  const files = packed[0].files.map((f) => f.path);
  assert.ok(
    files.includes("dist/cli/main.js") && files.some((f) => /^dist\/cli\/chunk-\w+\.js$/.test(f)),
    "the bin and the bundle's chunks",
  );
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("test/")), "only dist/ and the package files");

  const prefix = path.join(fx.base, "prefix");
  mkdirSync(prefix);
  copyFileSync(path.join(packDir, packed[0].filename), path.join(prefix, packed[0].filename));
  installFrom(prefix, packed[0].filename);
  try {
    execFileSync("npm", ["ci", "--offline", "--no-audit", "--no-fund"], {
      cwd: prefix,
      env: {
        ...process.env,
        npm_config_better_sqlite3_local_prebuilds: sqlitePrebuild(path.join(fx.base, "prebuilds")),
      },
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 10 * 60_000,
    });
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "");
    if (!stderr.includes("ENOTCACHED")) throw err;
    // Offline, npm has only its cache: a HOME other than the one `npm ci` ran with has none.
    const cache = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim();
    throw new Error(
      `this test installs latch offline from npm's cache, and ${cache} lacks a dependency: run \`npm ci\` ` +
        `with this HOME first, or point npm_config_cache at the cache it filled (CI does)\n${stderr}`,
      { cause: err },
    );
  }
  const pkg = path.join(prefix, "node_modules", "latch");
  assert.ok(!lstatSync(pkg).isSymbolicLink(), "latch is unpacked from the tarball, not linked");
  // Real dependencies, installed by npm: not the repo's node_modules.
  for (const dep of ["better-sqlite3", "@modelcontextprotocol/sdk", "zod"])
    assert.ok(lstatSync(path.join(prefix, "node_modules", dep)).isDirectory(), dep);
  assert.ok(!lstatSync(path.join(prefix, "node_modules")).isSymbolicLink());

  const env = {
    ...process.env,
    PATH: `${path.join(prefix, "node_modules", ".bin")}${path.delimiter}${process.env.PATH}`,
  };
  const version = execFileSync("latch", ["--version"], { env, encoding: "utf8", cwd: fx.base }).trim();
  assert.equal(version, JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")).version);

  writeFileSync(path.join(fx.root, "hello.txt"), "installed\n");
  const client = new Client({ name: "new-user", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: "latch",
      args: ["mcp", "--root", fx.root, "--state-dir", fx.state],
      env,
      cwd: fx.base,
      stderr: "pipe",
    }),
  );
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("read_file") && names.includes("local_shell"), names.join(", "));
    const r = (await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } })) as ToolResult;
    assert.equal(fieldsOf(r).content, "installed\n");
  } finally {
    await client.close();
  }
});

/** better-sqlite3's binary from the repo's node_modules, packed as prebuild-install looks for it in `dir`. */
function sqlitePrebuild(dir: string): string {
  const mod = path.join(REPO, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(readFileSync(path.join(mod, "package.json"), "utf8")) as { version: string };
  const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header
    ?.glibcVersionRuntime;
  const libc = process.platform === "linux" && !glibc ? "musl" : "";
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  mkdirSync(dir, { recursive: true });
  execFileSync("tar", ["-czf", path.join(dir, name), "-C", mod, "build/Release/better_sqlite3.node"]);
  return dir;
}

/** The prefix's package.json and lockfile: latch from the tarball, its dependencies as the repo's lockfile pins them. */
function installFrom(prefix: string, tarball: string): void {
  type Entry = { version?: string; dev?: boolean; link?: boolean; [k: string]: unknown };
  const lock = JSON.parse(readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, Entry>;
  };
  const self = lock.packages[""];
  const integrity =
    "sha512-" +
    createHash("sha512")
      .update(readFileSync(path.join(prefix, tarball)))
      .digest("base64");
  const dependencies = { latch: `file:${tarball}` };
  const packages: Record<string, unknown> = {
    "": { name: "latch-install", dependencies },
    "node_modules/latch": {
      version: self.version,
      resolved: `file:${tarball}`,
      integrity,
      license: self.license,
      dependencies: self.dependencies,
      bin: self.bin,
      engines: self.engines,
    },
  };
  for (const [key, entry] of Object.entries(lock.packages))
    if (key.startsWith("node_modules/") && !entry.dev && !entry.link) packages[key] = entry;
  writeFileSync(
    path.join(prefix, "package.json"),
    JSON.stringify({ name: "latch-install", private: true, dependencies }),
  );
  writeFileSync(
    path.join(prefix, "package-lock.json"),
    JSON.stringify({ name: "latch-install", lockfileVersion: 3, requires: true, packages }),
  );
}
