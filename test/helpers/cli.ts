// Run the built CLI (`npm test` builds first) as a real process.
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli/main.js");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json?: any;
}

export function runCli(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: opts.cwd, env: { ...process.env, ...opts.env }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : 1
          : 0;
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined; // not every command prints JSON; callers assert on it when they expect it
        }
        resolve({ code, stdout, stderr, json });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}
