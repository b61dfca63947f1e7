// Running the built CLI as an unprivileged user (nobody) from a test that runs as root: that user must
// reach the node binary, dist/ and the packages the bundle leaves to node_modules. A clone in a
// private folder (0700, as /root or a container's home), or one made under umask 077, hides all of
// them, so this copies a readable install (dist/, package.json, the bundle's externals and what they
// depend on) into a folder every user can enter, and checks that the user can run it there. What
// cannot be arranged fails with the cause and the fix, never a module-not-found.
import { execFile, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CliRun } from "./cli.js";

export const NOBODY = 65534;
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SETPRIV = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];

export interface Unprivileged {
  /** A folder nobody can enter (mode 0755, every parent searchable): make fixtures here. */
  tmp: string;
  /** Runs `latch <args>` as nobody, with exactly `env`. */
  runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun>;
  /** The command that runs `latch <args>` as nobody, for a caller that spawns it itself (`latch mcp`). */
  command(args: string[]): { command: string; args: string[] };
}

let prepared: Unprivileged | undefined;

/** The readable install, made once per test process and removed at its exit. */
export function unprivileged(): Unprivileged {
  prepared ??= prepare();
  return prepared;
}

/** Whether nobody passes `test <flag> <file>` (the real check: modes, ACLs and every parent folder). */
function nobodyCan(flag: "-x" | "-r", file: string): boolean {
  return spawnSync("setpriv", [...SETPRIV, "test", flag, file], { stdio: "ignore" }).status === 0;
}

function prepare(): Unprivileged {
  const why = "this test runs latch as nobody (uid 65534) to check file permissions, which root ignores";
  if (process.getuid?.() !== 0) throw new Error(`${why}: it needs root to switch user; run it as root (CI does)`);
  const probe = spawnSync("setpriv", ["--version"], { stdio: "ignore" });
  if (probe.error) throw new Error(`${why}: setpriv is missing (${probe.error.message}); install util-linux`);

  const base = reachableFolder(why);
  process.once("exit", () => rmSync(base, { recursive: true, force: true }));
  const tmp = path.join(base, "tmp");
  mkdirSync(tmp);

  // The node binary: the running one if nobody can start it, else a copy (a Node unpacked in a
  // private folder, as docs/architecture.md does for 22 and 24).
  let node = process.execPath;
  if (!nobodyCan("-x", node)) {
    node = path.join(base, "node");
    copyFileSync(process.execPath, node);
  }
  const install = path.join(base, "latch");
  cpSync(path.join(REPO, "dist"), path.join(install, "dist"), { recursive: true });
  copyFileSync(path.join(REPO, "package.json"), path.join(install, "package.json")); // "type": "module"
  for (const rel of externalClosure())
    cpSync(path.join(REPO, rel), path.join(install, rel), { recursive: true, verbatimSymlinks: true });
  openToAll(base);
  const cli = path.join(install, "dist", "cli", "main.js");

  // The proof that nobody can run it: a real call, which loads better-sqlite3's native module.
  const scratch = mkdtempSync(path.join(tmp, "check-"));
  chownSync(scratch, NOBODY, NOBODY);
  const argv = ["call", "list_dir", '{"path":"."}', "--root", scratch, "--state-dir", path.join(scratch, "state")];
  const check = spawnSync("setpriv", [...SETPRIV, node, cli, ...argv], {
    encoding: "utf8",
    cwd: "/",
    env: { PATH: process.env.PATH, HOME: scratch },
  });
  rmSync(scratch, { recursive: true, force: true });
  if (check.status !== 0)
    throw new Error(
      `${why}: nobody cannot run the copy of latch in ${install} (exit ${check.status}): ` +
        `${check.stderr || check.stdout || check.error?.message}; a package it loads may be missing from ` +
        `scripts/bundle-externals.json or not installed (npm ci)`,
    );

  return {
    tmp,
    command: (args) => ({ command: "setpriv", args: [...SETPRIV, node, cli, ...args] }),
    runCli: (args, env) =>
      new Promise((resolve) => {
        execFile("setpriv", [...SETPRIV, node, cli, ...args], { env, cwd: "/" }, (err, stdout, stderr) => {
          let json: any;
          try {
            json = JSON.parse(stdout);
          } catch {
            json = undefined; // the caller asserts on it
          }
          resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr, json });
        });
      }),
  };
}

/** A fresh 0755 folder that nobody can enter: under TMPDIR if its parents allow, else a system one. */
function reachableFolder(why: string): string {
  const tried: string[] = [];
  for (const dir of new Set([os.tmpdir(), "/tmp", "/var/tmp", "/dev/shm"])) {
    if (!existsSync(dir)) continue;
    const base = realpathSync(mkdtempSync(path.join(dir, "latch-nobody-")));
    chmodSync(base, 0o755);
    if (nobodyCan("-x", base)) return base;
    rmSync(base, { recursive: true, force: true });
    tried.push(dir);
  }
  throw new Error(
    `${why}: nobody can enter none of ${tried.join(", ")} (a parent folder is private); ` +
      `point TMPDIR at a folder whose every parent others may search (chmod o+x)`,
  );
}

/** node_modules paths (relative to the repo) of the bundle's externals and their dependencies. */
function externalClosure(): string[] {
  const lists = JSON.parse(readFileSync(path.join(REPO, "scripts/bundle-externals.json"), "utf8")) as Record<
    string,
    string[]
  >;
  const deps = Object.keys(readManifest(REPO).dependencies ?? {});
  const roots = new Set<string>();
  for (const pattern of Object.values(lists).flat()) {
    const name = pattern.replace(/\/\*$/, "");
    if (name.startsWith("@") && !name.includes("/"))
      deps.filter((d) => d.startsWith(`${name}/`)).forEach((d) => roots.add(d));
    else roots.add(name);
  }
  const found = new Set<string>();
  const visit = (name: string, from: string, optional: boolean) => {
    const dir = locate(name, from);
    if (dir === undefined) {
      if (optional) return; // another platform's binary
      throw new Error(`${name} (needed by ${path.relative(REPO, from) || "latch"}) is not installed: run npm ci`);
    }
    const rel = path.relative(REPO, dir);
    if (found.has(rel)) return;
    found.add(rel);
    const m = readManifest(dir);
    for (const d of Object.keys(m.dependencies ?? {})) visit(d, dir, false);
    for (const d of Object.keys(m.optionalDependencies ?? {})) visit(d, dir, true);
  };
  for (const name of roots) visit(name, REPO, false);
  return [...found];
}

/** Node's lookup: node_modules/<name> in `from` and each parent up to the repo. */
function locate(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (dir === REPO || path.dirname(dir) === dir) return undefined;
  }
}

function readManifest(dir: string): { dependencies?: object; optionalDependencies?: object } {
  return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
}

/** Makes a tree readable by all, whatever the umask made it: 0755 folders and executables, 0644 files. */
function openToAll(p: string): void {
  const st = lstatSync(p);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(p, 0o755);
    for (const e of readdirSync(p)) openToAll(path.join(p, e));
  } else chmodSync(p, st.mode & 0o111 ? 0o755 : 0o644);
}
