// Policy programs for tests: small node scripts with an absolute shebang (the programs run with a
// cleared environment, so `#!/usr/bin/env node` would not find node).
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Write an executable program whose body is JavaScript; `input` holds the parsed request. */
export function writeProgram(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `#!${process.execPath}\nlet raw = "";\nprocess.stdin.on("data", (c) => (raw += c));\nprocess.stdin.on("end", () => {\n  const input = JSON.parse(raw);\n  ${body}\n});\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

/** A program that prints a fixed answer. */
export function answering(dir: string, name: string, answer: unknown): string {
  return writeProgram(dir, name, `process.stdout.write(${JSON.stringify(JSON.stringify(answer))});`);
}
