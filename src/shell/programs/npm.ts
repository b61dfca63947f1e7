// npm, npx, pnpm, yarn: scripts in package.json and packages' install scripts are workspace code;
// installs and `npx` reach the network.
import type { ProgramTable } from "./types.js";

/** install, ci, update and their aliases (npm's own misspellings too): they run install scripts and fetch. */
const INSTALLS = [
  "install",
  "i",
  "in",
  "ins",
  "inst",
  "insta",
  "instal",
  "isnt",
  "isntal",
  "isntall",
  "add",
  "ci",
  "clean-install",
  "ic",
  "install-clean",
  "isntall-clean",
  "install-test",
  "it",
  "install-ci-test",
  "cit",
  "update",
  "up",
  "upgrade",
  "udpate",
];

const RUNS_SCRIPTS = [
  "run",
  "run-script",
  "rum",
  "urn",
  "test",
  "tst",
  "t",
  "start",
  "stop",
  "restart",
  "exec",
  "x",
  "explore",
  "rebuild",
  "rb",
  ...INSTALLS,
  "link",
  "ln",
  "pack",
  "publish",
  "version",
  "dedupe",
  "prune",
  "uninstall",
  "remove",
  "rm",
  "r",
  "un",
  "unlink",
  "init",
  "create",
  "dlx",
];
const NETWORK = [
  ...INSTALLS,
  "publish",
  "view",
  "v",
  "info",
  "show",
  "search",
  "outdated",
  "audit",
  "login",
  "logout",
  "whoami",
  "dist-tag",
  "owner",
  "access",
  "deprecate",
  "unpublish",
  "dlx",
  "create",
  "init",
  "exec",
  "x",
];
const WRITES = [...RUNS_SCRIPTS, "cache", "config", "set", "c", "pkg", "fund", "doctor"];

/** Subcommands that only read (yarn, pnpm and bun run any other word as a package.json script). */
const READS = [
  "ls",
  "list",
  "why",
  "info",
  "view",
  "outdated",
  "audit",
  "help",
  "bin",
  "root",
  "prefix",
  "explain",
  "query",
  "docs",
  "repo",
  "bugs",
  "search",
];

const npmLike = (name: string): ProgramTable => ({
  names: [name],
  subcommands: true,
  grammar: { abbrev: false, shortValue: "wC", longValue: ["workspace", "prefix", "dir", "cwd", "filter"] },
  rules: [
    {
      effect: "workspace",
      why: "runs package.json scripts or packages' install scripts (workspace code)",
      when: (p) =>
        (p.sub !== undefined && RUNS_SCRIPTS.includes(p.sub)) ||
        (name !== "npm" &&
          !p.before.some((o) => o.name.startsWith("--v") || o.name === "-v") &&
          !READS.includes(p.sub ?? "ls") &&
          p.sub !== undefined) ||
        (name !== "npm" && p.sub === undefined && p.before.length === 0),
      match: [`${name} test`, `${name} run build`, `${name} install`, `${name} exec tsc`],
      not_match: [`${name} --version`, `${name} ls`],
    },
    {
      effect: "network",
      why: "reaches the package registry",
      subcommands: NETWORK,
      always: true,
      match: [`${name} install`, `${name} view react`],
      not_match: [`${name} test`, `${name} ls`],
    },
    {
      effect: "write",
      why: "writes node_modules, lockfiles, caches or config",
      subcommands: WRITES,
      always: true,
      match: [`${name} ci`, `${name} config set x y`],
      not_match: [`${name} ls`, `${name} --version`],
    },
  ],
});

const npx: ProgramTable = {
  names: ["npx", "pnpx", "bunx"],
  grammar: { abbrev: false, stopAtOperand: true, shortValue: "pc", longValue: ["package", "call"] },
  base: [
    { effect: "workspace", why: "runs a package's program, installed in the workspace or fetched" },
    { effect: "network", why: "may fetch the package from the registry" },
    { effect: "write", why: "may install into the npm cache" },
  ],
  rules: [
    {
      effect: "inline",
      why: "runs a command string (`-c` / `--call`)",
      options: ["-c", "--call"],
      match: ["npx -c 'id'", "npx --call=id"],
      not_match: ["npx tsc --noEmit"],
    },
  ],
};

export const NPM: readonly ProgramTable[] = [npmLike("npm"), npmLike("pnpm"), npmLike("yarn"), npmLike("bun"), npx];
