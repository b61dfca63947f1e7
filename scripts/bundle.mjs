// The `latch` command as one ES module (dist/cli/main.js), after tsc has built dist/: a cold start
// that loads ~250 files through Node's ESM loader costs ~300 ms more than one file (bench/RESULTS.md,
// "mcp"). Native and binary-shipping packages stay external and load from node_modules as usual.
// dist/index.js (the library) stays tsc's output. The tools' JSON Schemas, which zod takes ~60 ms to
// compute at startup, are computed here from the same source and inlined (src/registry.ts).
import { chmodSync, readFileSync } from "node:fs";
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

// The bundle's entry is dist/cli/main.js (src/cli/main.ts: --version and --help alone, else the
// program), split at dynamic imports (the program, the HTTP transport, the SDK's Ajv) into chunks
// beside it, so a start loads only what it uses.
await build({
  entryPoints: { main: path.join(repo, "src/cli/main.ts") },
  outdir: path.join(repo, "dist/cli"),
  splitting: true,
  chunkNames: "chunk-[hash]",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // These find files beside themselves (native addons, rg, GopherJS): load them from node_modules.
  external: external.cli,
  // Bundled CommonJS packages call require(); give the module one.
  banner: {
    js: "import { createRequire as latchCreateRequire } from 'node:module'; const require = latchCreateRequire(import.meta.url);",
  },
  define: { LATCH_INPUT_SCHEMAS: JSON.stringify(JSON.stringify(schemas)), LATCH_HELP: JSON.stringify(help) },
  plugins: [zodEnglishOnly, sdkAjvDefault],
  // A quarter less to parse at every start; names are kept, and main.js.map maps a stack trace back
  // to src/ under NODE_OPTIONS=--enable-source-maps.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  sourcesContent: false,
  logLevel: "warning",
});
chmodSync(outfile, 0o755);

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
