// The tree the browse-tool tests share: plain text, nested .gitignore files (with a re-include), a
// secret, .git and node_modules, binaries, links out of the root, and latch's own files inside it.
import childProcess from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { parseEnvelopeDef } from "../../src/policy/envelope-parse.js";
import type { Fixture } from "../helpers/fixture.js";

export function buildTree(fx: Fixture): void {
  fx.write({
    "README.md": "# demo\nfind the needle here\n",
    "src/a.ts": "const x = 1;\n// needle one\nconst y = 2;\nconst z = 3;\nconst w = 4; // needle two\n",
    "src/b.ts": "nothing to see\n",
    "src/deep/c.ts": "export const needle = true;\n",
    "src/deep/Mixed.txt": "A NEEDLE in caps\nneedles\n",
    "docs/guide.md": "line 1\nline 2\nneedle in docs\nline 4\nline 5\nline 6\nline 7\nneedle again\nline 9\n",
    ".gitignore": "secret.env\nbuild/\n*.log\n",
    "secret.env": "API_KEY=needle-secret-value\n",
    "build/out.js": "needle in build output\n",
    "app.log": "needle in a log\n",
    "pkg/.gitignore": "*.gen.ts\n!keep.gen.ts\n",
    "pkg/skip.gen.ts": "needle generated\n",
    "pkg/keep.gen.ts": "needle kept generated\n",
    "pkg/nested/.gitignore": "private/\n",
    "pkg/nested/private/key.txt": "needle private key\n",
    "pkg/nested/public.txt": "needle public\n",
    ".git/config": "[core] needle\n",
    "node_modules/lib/index.js": "module.exports = 'needle';\n",
    "bin/tool.sh": "#!/bin/sh\necho needle\n",
    "data/blob.bin": Buffer.concat([Buffer.from([0, 1, 2, 3]), Buffer.from(" needle inside binary \n")]),
    "data/plain.bin": Buffer.from([0, 1, 2, 3, 4]),
  });
  chmodSync(path.join(fx.root, "bin/tool.sh"), 0o755);
  // Outside the root: a folder and a file full of needles, reached only through links.
  mkdirSync(path.join(fx.base, "outside"), { recursive: true });
  writeFileSync(path.join(fx.base, "outside", "leak.txt"), "needle outside the root\n");
  symlinkSync(path.join(fx.base, "outside"), path.join(fx.root, "escape"));
  symlinkSync(path.join(fx.base, "outside", "leak.txt"), path.join(fx.root, "leak-link.txt"));
  symlinkSync("src/a.ts", path.join(fx.root, "inner-link.ts"));
}

/** Pids of rg processes whose parent is this process. */
export function rgChildren(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // the process ended while we looked
    }
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    if (comm === "rg" && ppid === process.pid) out.push(Number(pid));
  }
  return out;
}

/**
 * What `fn` returned, and the argv of each rg this process started while it ran. Every spawn goes
 * through child_process.spawn (src/browse/rg-log.ts), wrapped meanwhile; syncBuiltinESMExports carries
 * the wrapper to the modules that imported `spawn` by name. Calls made meanwhile are counted too, so
 * `fn` should be the call alone.
 */
export async function rgSpawnedDuring<T>(fn: () => Promise<T>): Promise<{ value: T; rg: string[][] }> {
  const real = childProcess.spawn;
  const rg: string[][] = [];
  childProcess.spawn = function (this: unknown, ...args: unknown[]) {
    if (path.basename(String(args[0])) === "rg") rg.push(Array.isArray(args[1]) ? args[1].map(String) : []);
    return (real as (...a: unknown[]) => childProcess.ChildProcess).apply(this, args);
  } as typeof real;
  syncBuiltinESMExports();
  try {
    return { value: await fn(), rg };
  } finally {
    childProcess.spawn = real;
    syncBuiltinESMExports();
  }
}

/**
 * The host of the visibility tests over `fx`: the "locked" envelope (auto_edit with every `private`
 * folder denied to every tool and `vault` denied to reads), `secretstuff` a denied substring, and the
 * search engine asked for (LATCH_GREP_ENGINE); `localFs` adds local_fs settings.
 */
export function lockedHost(fx: Fixture, engine: string, localFs: Record<string, string> = {}) {
  return fx.host({
    env: { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_GREP_ENGINE: engine },
    envelope: "locked",
    config: {
      toolsPolicies: { local_fs: { _denied_path_substrings: "secretstuff", ...localFs } },
      agents: {},
      envelopes: {
        locked: parseEnvelopeDef(
          {
            extends: "auto_edit",
            always_deny: [{ tool: "*", when_path: "**/private/**" }],
            files: { read: { deny_paths: ["vault/**"] } },
          },
          ["envelopes", "locked"],
        ),
      },
    },
  });
}
