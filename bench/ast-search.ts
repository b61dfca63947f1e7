// ast_search against the ast-grep CLI (`sg`, from the @ast-grep/cli dev dependency) over a large
// TypeScript tree: every .ts file under node_modules (real-world code and declarations), copied to a
// temp folder with `node_modules` renamed so that both tools walk it. Files over latch's 1 MiB read
// limit are left out, so both search the same files. Each pattern: 1 warm-up, then the median of 5.
//   node --import tsx bench/ast-search.ts [--no-write]    (writes the ast-search section of bench/RESULTS.md)
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { createHost } from "../src/host/create-host.js";
import { measuredLine, publish, REPO, watchLoad } from "./report.js";

const PATTERNS = ["console.log($$$A)", "export declare function $F($$$P): $R;", "$X as any"];
const RUNS = 3;
const MAX_BYTES = 1 << 20;

function copyTree(from: string, to: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const visit = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, d.name);
      if (d.isDirectory()) visit(abs);
      else if (d.isFile() && d.name.endsWith(".ts")) {
        const size = statSync(abs).size;
        if (size > MAX_BYTES) continue;
        const rel = path
          .relative(from, abs)
          .split(path.sep)
          .map((p) => (p === "node_modules" ? "nm" : p));
        const dest = path.join(to, ...rel);
        mkdirSync(path.dirname(dest), { recursive: true });
        copyFileSync(abs, dest);
        files++;
        bytes += size;
      }
    }
  };
  visit(from);
  return { files, bytes };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timeIt(fn: () => Promise<number>): Promise<{ ms: number; count: number }> {
  await fn(); // warm-up: page cache, grammar load, JIT
  const times: number[] = [];
  let count = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    count = await fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), count };
}

function sgBinary(): string | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve(
      `@ast-grep/cli-${process.platform}-${process.arch}${process.platform === "linux" ? "-gnu" : ""}/package.json`,
    );
    const bin = path.join(path.dirname(pkg), process.platform === "win32" ? "ast-grep.exe" : "ast-grep");
    return existsSync(bin) ? bin : undefined;
  } catch {
    return undefined; // the peer is optional: without it the row says so
  }
}

async function main() {
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-ast-"));
  const tree = path.join(base, "tree");
  const size = copyTree(path.join(REPO, "node_modules"), tree);
  const host = await createHost({
    root: tree,
    stateDir: path.join(base, "state"),
    config: {
      toolsPolicies: {
        local_fs: { _max_grep_matches: "1000000", _max_output_bytes: "100000000" },
        ast: { _ast_deadline: "600s" },
      },
      agents: {},
    },
    env: {},
  });
  const load = watchLoad();
  const rows: string[] = [];
  const sg = sgBinary();
  const sgVersion = sg ? execFileSync(sg, ["--version"], { encoding: "utf8" }).trim() : "not installed";
  console.log(
    `tree: ${size.files} .ts files, ${(size.bytes / 1048576).toFixed(1)} MiB; ${os.cpus().length} cores; node ${process.version}; ${sgVersion}`,
  );
  console.log("| pattern | latch | sg | latch ÷ sg | matches |\n|---|---|---|---|---|");
  for (const pattern of PATTERNS) {
    const latch = await timeIt(async () => {
      const out = await host.call("ast_search", { pattern, lang: "typescript", path: "." });
      if (out.status !== "ok") throw new Error(JSON.stringify(out));
      return (out.result as { count: number }).count;
    });
    let peer = "n/a";
    let ratio = "n/a";
    let counts = `${latch.count}`;
    if (sg) {
      const s = await timeIt(async () => {
        const json = execFileSync(sg, ["run", "--pattern", pattern, "--lang", "ts", "--json=compact", "."], {
          cwd: tree,
          encoding: "utf8",
          maxBuffer: 1 << 30,
        });
        return (JSON.parse(json) as unknown[]).length;
      });
      peer = `${s.ms.toFixed(0)} ms`;
      ratio = (latch.ms / s.ms).toFixed(2);
      counts = latch.count === s.count ? `${latch.count}, same` : `latch ${latch.count}, sg ${s.count}`;
    }
    const row = `| \`${pattern}\` | ${latch.ms.toFixed(0)} ms | ${peer} | ${ratio} | ${counts} |`;
    console.log(row);
    rows.push(row);
  }
  load.stop();
  host.close();
  rmSync(base, { recursive: true, force: true });
  const section = [
    measuredLine("node --import tsx bench/ast-search.ts", load),
    `The tree: every \`.ts\` file under this repository's node_modules (${size.files} files, ${(size.bytes / 1048576).toFixed(1)} MiB; real-world sources and declarations), copied with \`node_modules\` renamed so both tools walk it; files over latch's 1 MiB \`_max_read_bytes\` left out so both search the same set. latch runs in-process (\`host.call("ast_search", …)\`, \`lang: "typescript"\`, caps and \`_ast_deadline\` raised); \`sg\` is ${sgVersion} from the \`@ast-grep/cli\` dev dependency, run as a process with \`--json=compact\`. Median of ${RUNS} runs each.`,
    "latch pays for its path rules (the resolver on every file and folder), reading each file into a JS string, and crossing into napi per file; the parse itself is the same tree-sitter grammar.",
    "",
    "| pattern | latch | sg | latch ÷ sg (lower is better) | matches |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
  publish("ast-search", "ast_search against the ast-grep CLI (`sg`)", section);
}

await main();
