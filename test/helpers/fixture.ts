// Temp-dir fixtures made at run time: a workspace, a state dir and a config file, all removed after.
import { mkdtempSync, realpathSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHost, type Host, type HostOptions } from "../../src/host/create-host.js";
import { plainTmpParents } from "./plain-tmp.js";

export interface Fixture {
  /** A folder that holds the workspace, the state dir and anything "outside". */
  base: string;
  root: string;
  state: string;
  /** Write files under the workspace: { "a/b.txt": "text" }. */
  write(files: Record<string, string | Buffer>): void;
  host(opts?: Partial<HostOptions>): Promise<Host>;
  cleanup(): void;
}

/**
 * A temp folder for fixtures whose programs a test names by absolute path: latch's shell refuses a
 * program path outside printable ASCII (a space, a look-alike letter), so under a TMPDIR such as
 * "/home/Jürgen/tmp" they go in /tmp. The rest of the suite keeps TMPDIR, to run where the user runs.
 */
export function programTmp(): string {
  return plainTmpParents("a fixture whose programs are named by absolute path")[0];
}

/** `tmp` is where the base folder goes (the sandbox tests need one outside /tmp). */
export function makeFixture(prefix = "latch-test-", tmp = os.tmpdir()): Fixture {
  const base = realpathSync(mkdtempSync(path.join(tmp, prefix)));
  const root = path.join(base, "ws");
  const state = path.join(base, "state");
  mkdirSync(root);
  const hosts: Host[] = [];
  return {
    base,
    root,
    state,
    write(files) {
      for (const [rel, content] of Object.entries(files)) {
        const abs = path.join(root, rel);
        mkdirSync(path.dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    },
    async host(opts = {}) {
      const h = await createHost({
        root,
        stateDir: state,
        config: { toolsPolicies: {}, agents: {} },
        env: { PATH: process.env.PATH ?? "", HOME: base },
        ...opts,
      });
      hosts.push(h);
      return h;
    },
    cleanup() {
      for (const h of hosts) h.close();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
