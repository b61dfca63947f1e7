// A hermetic shell fixture: a workspace and a private PATH of stub programs (so the planner's
// verdicts do not depend on what this machine has installed), plus a plan() helper.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { localShell } from "../../src/config/toolsets.js";
import { planShellCall, type ShellArgs, type ShellPlan } from "../../src/shell/plan.js";
import { resolvePath } from "../../src/fs/paths.js";
import { makeFixture, programTmp, type Fixture } from "../helpers/fixture.js";

const STUBS = [
  "ls",
  "cat",
  "echo",
  "git",
  "npm",
  "npx",
  "grep",
  "find",
  "env",
  "xargs",
  "nice",
  "nohup",
  "timeout",
  "stdbuf",
  "setsid",
  "time",
  "flock",
  "sh",
  "bash",
  "dash",
  "zsh",
  "make",
  "node",
  "true",
  "false",
  "mkdir",
  "touch",
  "head",
  "wc",
  "rm",
  "sudo",
  "doas",
  "su",
  "python3",
  "sed",
  "strace",
  "watch",
  "tsc",
  "tar",
  "awk",
  "perl",
  "ruby",
  "sort",
];

export interface ShellFixture extends Fixture {
  bin: string;
  sbin: string;
  pathDirs: string[];
  plan(args: ShellArgs | string, settings?: Record<string, string>): Promise<ShellPlan>;
}

export function makeShellFixture(): ShellFixture {
  const fx = makeFixture("latch-shell-", programTmp());
  const bin = path.join(fx.base, "bin");
  const sbin = path.join(fx.base, "sbin");
  mkdirSync(bin);
  mkdirSync(sbin);
  for (const name of STUBS) stub(path.join(bin, name));
  stub(path.join(sbin, "iptables"));
  writeFileSync(path.join(bin, "not-executable"), "plain\n");
  fx.write({
    "a.txt": "a\n",
    "src/a.ts": "export {};\n",
    ".env": "SECRET=1\n",
    ".env.example": "SECRET=\n",
    id_rsa: "key\n",
    "key.pem": "pem\n",
    "script.sh": "ls\n",
    lock: "",
  });
  mkdirSync(path.join(fx.root, "sub"));
  symlinkSync(path.join(bin, "rm"), path.join(fx.root, "ls")); // a program named ls that is rm
  symlinkSync(path.join(bin, "ls"), path.join(bin, "ls-link"));
  const pathDirs = [bin, sbin];
  return {
    ...fx,
    bin,
    sbin,
    pathDirs,
    plan(args, settings = {}) {
      const a = typeof args === "string" ? { command: args } : args;
      const policy = { root: fx.root, controlPlane: [fx.state], deniedSubstrings: [] };
      return planShellCall(a, {
        root: fx.root,
        settings: localShell.parse(settings),
        startupPath: pathDirs,
        controlPlane: policy.controlPlane,
        userHome: fx.base,
        // As with bubblewrap (CI has it): the workspace's .env and keys are masked, so `.` may be named.
        // Uncontained, a folder holding them is refused: test/shell/argument-attacks.test.ts.
        contained: true,
        resolve: (p) => resolvePath(policy, p),
      });
    },
  };
}

function stub(p: string): void {
  writeFileSync(p, "#!/bin/sh\nexit 0\n");
  chmodSync(p, 0o755);
}
