// The `latch` command as one ES module (dist/cli/main.js), after tsc has built dist/: a cold start
// that loads ~250 files through Node's ESM loader costs ~300 ms more than one file (bench/RESULTS.md,
// "mcp"). Native and binary-shipping packages stay external and load from node_modules as usual.
// dist/index.js (the library) stays tsc's output. The tools' JSON Schemas, which zod takes ~60 ms to
// compute at startup, are computed here from the same source and inlined (src/registry.ts). The program
// is also written as one CommonJS script with a V8 code cache for the building Node (program.cjs, below).
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { TOOLS, inputSchema } = await import(path.join(repo, "dist/registry.js"));
const schemas = Object.fromEntries(TOOLS.map((t) => [t.name, inputSchema(t)]));
// The top-level help, as commander prints it into a pipe: `latch --help` answers with it from main.js.
const { buildProgram } = await import(path.join(repo, "dist/cli/program.js"));
const help = buildProgram()
  .configureHelp({ helpWidth: 80 })
  .configureOutput({ getOutHasColors: () => false })
  .helpInformation();
// The shell's program tables checked against their own examples once here, not at every start: a
// table that contradicts its examples fails the build (and test/shell/program-tables.test.ts).
const { checkExamples, checkWrapperExamples } = await import(path.join(repo, "dist/shell/programs/index.js"));
const failures = [...checkExamples(), ...checkWrapperExamples()];
if (failures.length > 0) throw new Error(`latch's program tables contradict their examples:\n${failures.join("\n")}`);
const outfile = path.join(repo, "dist/cli/main.js");
// Where the entry finds a plain start's answers, and the mark its root goes in (src/transports/mcp/plain-start.ts).
const { PLAIN_FILE, ROOT_MARK } = await import(path.join(repo, "dist/transports/mcp/plain-start.js"));
// The packages the bundles leave to node_modules, in a file of their own: test/helpers/unprivileged.ts
// copies exactly these beside a copy of dist/ for a user who cannot read the checkout.
const external = JSON.parse(readFileSync(path.join(repo, "scripts/bundle-externals.json"), "utf8"));

// zod's `locales` namespace (messages in ~50 languages, ~300 KB, a fifth of what a start parsed) stays
// whole in the bundle because `z` is used as a value. latch speaks English, zod's default, which
// zod/v4/classic/schemas.js imports by itself; the namespace here keeps `en` alone.
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: path.dirname(args.path),
      loader: "js",
    }));
  },
};

// The SDK's Server imports its Ajv validator statically, for when none is given: that ran Ajv's ~200 KB
// at every start. latch always gives one (lazyValidator, src/transports/mcp/server.ts, which imports
// the real one at the first approval form), so for the SDK's own import the default is a stub that
// says so if it is ever constructed.
const sdkAjvDefault = {
  name: "sdk-ajv-default",
  setup(b) {
    b.onResolve({ filter: /[\\/]validation[\\/]ajv-provider\.js$/ }, (args) =>
      /@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/](server|client)[\\/]index\.js$/.test(args.importer)
        ? { path: "sdk-ajv-default", namespace: "latch-stub" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "latch-stub" }, () => ({
      contents:
        'export class AjvJsonSchemaValidator { constructor() { throw new Error("latch: the MCP SDK needs a jsonSchemaValidator option here (scripts/bundle.mjs)"); } }',
      loader: "js",
    }));
  },
};

// better-sqlite3's JavaScript is bundled (and so in the code cache): from node_modules it was ~15 files
// for Node's loader to read and compile at every start, and its `bindings` package finds the addon by
// making a stack trace and trying a dozen paths. Here the addon is loaded from where the package's install
// puts it (build/Release: its prebuilt binary, or node-gyp's build); the package stays in node_modules
// for that file ("native" in scripts/bundle-externals.json).
const sqliteAddon = {
  name: "better-sqlite3-addon",
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, (args) =>
      /[\\/]better-sqlite3[\\/]lib[\\/]database\.js$/.test(args.importer)
        ? { path: "better-sqlite3-addon", namespace: "latch-sqlite" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "latch-sqlite" }, () => ({
      contents:
        'const path = require("node:path"); module.exports = (name) => require(path.join(path.dirname(require.resolve("better-sqlite3/package.json")), "build", "Release", name));',
      loader: "js",
    }));
  },
};

// What both copies of the program below share (the ES module chunks and program.cjs): one place to
// change what is bundled, left out, computed at build time or minified.
const programBuild = {
  bundle: true,
  platform: "node",
  target: "node20",
  // These find files beside themselves (native addons, rg, GopherJS): load them from node_modules.
  external: [...external.cli, "better-sqlite3/package.json"],
  define: { LATCH_INPUT_SCHEMAS: JSON.stringify(JSON.stringify(schemas)), LATCH_HELP: JSON.stringify(help) },
  plugins: [zodEnglishOnly, sdkAjvDefault, sqliteAddon],
  // A quarter less to parse at every start; names are kept.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
};

// The bundle's entry is dist/cli/main.js (src/cli/main.ts: --version and --help alone, else the
// program), split at dynamic imports (the program, the HTTP transport, the SDK's Ajv) into chunks
// beside it, so a start loads only what it uses. An earlier build's chunks go first: named by their
// hash, they would stay beside the new ones (and npm pack would ship them).
for (const f of readdirSync(path.join(repo, "dist/cli")))
  if (/^chunk-[A-Z0-9]+\.js(\.map)?$/.test(f)) rmSync(path.join(repo, "dist/cli", f));
await build({
  ...programBuild,
  entryPoints: { main: path.join(repo, "src/cli/main.ts") },
  outdir: path.join(repo, "dist/cli"),
  splitting: true,
  chunkNames: "chunk-[hash]",
  format: "esm",
  // Bundled CommonJS packages call require(); give the module one.
  banner: {
    js: "import { createRequire as latchCreateRequire } from 'node:module'; const require = latchCreateRequire(import.meta.url);",
  },
  // main.js.map maps a stack trace back to src/ under NODE_OPTIONS=--enable-source-maps.
  sourcemap: "linked",
  sourcesContent: false,
});
chmodSync(outfile, 0o755);

// The program once more, as one CommonJS script (program.cjs) that src/cli/code-cache.ts runs through
// vm.Script with a V8 code cache: the ES module chunks above stay for a Node without a cache. Strict,
// as the modules are; import.meta.url is this file's URL, in the folder the chunks are in (workers
// and main.js are found beside it); import.meta.resolve serves only runs from src/ under tsx.
const programCjs = path.join(repo, "dist/cli/program.cjs");
// Every earlier cache goes first, another Node's too: V8 checks a cache against the source's length
// only, so one made for an earlier program.cjs of the same length would run that program's code.
for (const f of readdirSync(path.dirname(programCjs)))
  if (/^program\.cjs\..*\.cache$/.test(f)) rmSync(path.join(path.dirname(programCjs), f));
await build({
  ...programBuild,
  entryPoints: [path.join(repo, "src/cli/program.ts")],
  outfile: programCjs,
  format: "cjs",
  // import() of an external package (rg, pg, ast-grep) becomes require(): in a vm.Script whose code
  // came from a V8 code cache, import() lost its loader and failed (rg not found, the js engine ran).
  supported: { "dynamic-import": false },
  banner: {
    js: '"use strict"; const latchMetaUrl = require("node:url").pathToFileURL(__filename).href; const latchMetaResolve = () => { throw new Error("latch: import.meta.resolve is for runs from src/"); };',
  },
  define: {
    ...programBuild.define,
    "import.meta.url": "latchMetaUrl",
    "import.meta.resolve": "latchMetaResolve",
  },
});
assertAscii(programCjs);
await trainCodeCache();

// The worker threads, each loaded as ./NAME.js beside the module that starts it: in the bundle,
// beside main.js. The JS grep engine's regex worker (src/browse/grep-pool.ts), url_fetch's
// HTML conversion (src/web/html-pool.ts), read_media's PDF worker (src/media/pdf.ts) and the
// disclosure gate's scanner (src/disclose/scanner.ts);
// pdfjs-dist stays a package import (node_modules).
await build({
  entryPoints: {
    "grep-worker": path.join(repo, "src/browse/grep-worker.ts"),
    "html-worker": path.join(repo, "src/web/html-worker.ts"),
    "pdf-worker": path.join(repo, "src/media/pdf-worker.ts"),
    "scan-worker": path.join(repo, "src/disclose/scan-worker.ts"),
  },
  outdir: path.join(repo, "dist/cli"),
  bundle: true,
  external: external.workers,
  platform: "node",
  format: "esm",
  target: "node20",
  // secretlint's core requires `debug`, which requires tty: give CommonJS a require(), as above.
  banner: {
    js: "import { createRequire as latchCreateRequire } from 'node:module'; const require = latchCreateRequire(import.meta.url);",
  },
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
});

/**
 * The entry reads program.cjs as latin1 (src/cli/code-cache.ts): a byte is a character, one byte each in
 * V8, with no UTF-8 to decode. That holds only while the script is ASCII; one non-ASCII character would
 * also have made the whole 3 MB a two-byte string. esbuild escapes strings but not regular expression
 * literals: write such a character as \uXXXX in src/.
 */
function assertAscii(file) {
  const bytes = readFileSync(file);
  const at = bytes.findIndex((b) => b > 0x7f);
  if (at >= 0)
    throw new Error(
      `scripts/bundle.mjs: ${path.relative(repo, file)} is not ASCII at byte ${at}, near "${bytes.subarray(Math.max(0, at - 60), at + 20).toString("utf8")}": write the character as \\uXXXX in src/`,
    );
}

/**
 * One `latch mcp` on a scratch folder, as a client starts it: initialize, tools/list, a read_file. Its
 * exit writes the code cache for this Node beside program.cjs (src/cli/code-cache.ts), holding the code
 * of every function that start compiled. A run that fails leaves no cache: the chunks load instead.
 * It is a plain start (src/transports/mcp/plain-start.ts: an empty HOME, no variable of latch's but
 * the one that asks for the cache), so its first two answers are every plain start's: they are kept
 * beside program.cjs with the root's place marked, for the entry to give (PLAIN_FILE).
 */
async function trainCodeCache() {
  const { mkdirSync, mkdtempSync, realpathSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { spawn } = await import("node:child_process");
  const plainFile = path.join(path.dirname(programCjs), PLAIN_FILE);
  rmSync(plainFile, { force: true }); // an earlier build's answers are not this one's
  const base = mkdtempSync(path.join(tmpdir(), "latch-code-cache-"));
  const answers = {};
  try {
    writeFileSync(path.join(base, "a.txt"), "hello\n");
    mkdirSync(path.join(base, ".home"));
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: path.join(base, ".home"),
      LATCH_BUILD_CODE_CACHE: "1",
    };
    const child = spawn(process.execPath, [outfile, "mcp", "--root", base, "--state-dir", path.join(base, ".state")], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const m = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (m.id === 1 || m.id === 2) answers[m.id] = m.result;
        if (m.id === 1) {
          send({ method: "notifications/initialized" });
          send({ id: 2, method: "tools/list" });
        } else if (m.id === 2)
          send({ id: 3, method: "tools/call", params: { name: "read_file", arguments: { path: "a.txt" } } });
        else if (m.id === 3) child.stdin.end();
      }
    });
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "latch-build", version: "1" } },
    });
    const code = await new Promise((resolve) => child.on("close", resolve));
    if (code !== 0)
      throw new Error(`scripts/bundle.mjs: the code cache's training run of latch mcp exited ${code}:\n${err}`);
    writePlainAnswers(plainFile, realpathSync(base), answers);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** The training start's instructions with its root marked, and its tools, which name no root. */
function writePlainAnswers(file, root, answers) {
  const instructions = answers[1]?.instructions;
  const tools = answers[2]?.tools;
  if (typeof instructions !== "string" || !Array.isArray(tools))
    throw new Error("scripts/bundle.mjs: the training run of latch mcp gave no instructions or no tools");
  if (!instructions.includes(root) || JSON.stringify(tools).includes(root))
    throw new Error(`scripts/bundle.mjs: the training run's root ${root} is not where a plain start's answers name it`);
  writeFileSync(file, JSON.stringify({ v: 1, instructions: instructions.split(root).join(ROOT_MARK), tools }));
}
