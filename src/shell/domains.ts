// The names a command will reach, when latch can tell, for a network grant (`_network = "ask"`): the
// person is asked for these, and the proxy (sandbox/proxy/) lets the call reach these alone. npm and
// its kin → the configured registry; git fetch/pull/push/clone → the URL's or the remote's host; pip →
// its index; curl and wget → their URLs' hosts. Anything else, or a form these rules do not read,
// is `undefined`: the person is asked for "network" (any public name).
import { lstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { isInside } from "../fs/paths.js";

interface Where {
  /** The folder the command runs in, and the workspace root (the search for .npmrc and .git stops there). */
  cwd: string;
  root: string;
  env: NodeJS.ProcessEnv;
  home?: string;
}

const NPM = new Set(["npm", "npx", "pnpm", "pnpx"]);
const PIP = new Set(["pip", "pip3"]);
const FETCHERS = new Set(["curl", "wget"]);
const GIT_NET = new Set(["fetch", "pull", "push", "clone", "ls-remote", "submodule"]);
const PYPI = ["pypi.org", "files.pythonhosted.org"];

/** The names `argv` will reach, or undefined when latch cannot tell. */
export function domainsOf(argv: readonly string[], w: Where): string[] | undefined {
  const prog = path.basename(argv[0] ?? "");
  const args = argv.slice(1);
  if (NPM.has(prog)) return npmRegistry(args, w);
  if (prog === "yarn") return [hostOf(optionValue(args, "--registry")) ?? "registry.yarnpkg.com"];
  if (PIP.has(prog)) return pipIndex(args, w);
  if (/^python3?(\.\d+)?$/.test(prog) && args[0] === "-m" && args[1] === "pip") return pipIndex(args.slice(2), w);
  if (FETCHERS.has(prog)) {
    // The URLs with a scheme: a bare word may be an option's value; a URL without a scheme is not
    // granted, so the proxy refuses it.
    const hosts = args.filter((a) => /^[a-z][a-z0-9+.-]*:\/\//i.test(a)).map(hostOf);
    return hosts.length > 0 && hosts.every((h) => h !== undefined) ? [...new Set(hosts)] : undefined;
  }
  if (prog === "git") return gitRemote(args, w);
  return undefined;
}

/** `--name value` or `--name=value`. */
function optionValue(args: readonly string[], ...names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    for (const n of names) {
      if (args[i] === n) return args[i + 1];
      if (args[i].startsWith(`${n}=`)) return args[i].slice(n.length + 1);
    }
  }
  return undefined;
}

/** The host of an http(s) URL, or of scp-like git (`git@host:path`); undefined for anything else. */
function hostOf(u: string | undefined): string | undefined {
  if (u === undefined) return undefined;
  const scp = /^[\w.-]+@([\w.-]+):/.exec(u);
  if (scp) return scp[1].toLowerCase();
  try {
    const url = new URL(u);
    if (!["http:", "https:", "ssh:", "git:"].includes(url.protocol) || url.hostname === "") return undefined;
    return url.hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** A file's text when it is a plain file (a link is not followed: it may point anywhere). */
function plainFile(p: string): string | undefined {
  try {
    return lstatSync(p).isFile() ? readFileSync(p, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** The folders from cwd up to the root, inner first. */
function upToRoot(w: Where): string[] {
  const out: string[] = [];
  for (let d = w.cwd; isInside(w.root, d); d = path.dirname(d)) {
    out.push(d);
    if (d === w.root || d === path.dirname(d)) break;
  }
  return out;
}

function npmRegistry(args: readonly string[], w: Where): string[] | undefined {
  const given = optionValue(args, "--registry") ?? w.env.npm_config_registry ?? w.env.NPM_CONFIG_REGISTRY;
  if (given !== undefined) return wrap(hostOf(given));
  const rcs = [...upToRoot(w).map((d) => path.join(d, ".npmrc")), ...(w.home ? [path.join(w.home, ".npmrc")] : [])];
  for (const rc of rcs) {
    const m = /^\s*registry\s*=\s*(\S+)\s*$/m.exec(plainFile(rc) ?? "");
    if (m) return wrap(hostOf(m[1]));
  }
  return ["registry.npmjs.org"];
}

function pipIndex(args: readonly string[], w: Where): string[] | undefined {
  const index = optionValue(args, "-i", "--index-url") ?? w.env.PIP_INDEX_URL;
  const extra = optionValue(args, "--extra-index-url") ?? w.env.PIP_EXTRA_INDEX_URL;
  const hosts = [index === undefined ? PYPI : wrap(hostOf(index)), extra === undefined ? [] : wrap(hostOf(extra))];
  return hosts.some((h) => h === undefined) ? undefined : [...new Set(hosts.flat() as string[])];
}

/** git fetch/pull/push/ls-remote [remote]: a URL's host, or the remote's url in the repository's config. */
function gitRemote(args: readonly string[], w: Where): string[] | undefined {
  const sub = args.findIndex((a) => !a.startsWith("-"));
  if (sub < 0 || !GIT_NET.has(args[sub])) return undefined;
  if (args[sub] === "submodule") return undefined; // each submodule's own URL: asked as "network"
  const rest = args.slice(sub + 1).filter((a) => !a.startsWith("-"));
  const first = rest[0];
  const url = hostOf(first);
  if (url) return [url];
  if (args[sub] === "clone") return undefined;
  const remote = first ?? "origin";
  for (const d of upToRoot(w)) {
    const config = plainFile(path.join(d, ".git", "config"));
    if (config === undefined) continue;
    return wrap(hostOf(remoteUrl(config, remote)));
  }
  return undefined;
}

/** `url = …` of `[remote "name"]` in a git config file. */
function remoteUrl(config: string, remote: string): string | undefined {
  let inside = false;
  for (const line of config.split("\n")) {
    const section = /^\s*\[\s*remote\s+"([^"]*)"\s*\]/.exec(line);
    if (section) inside = section[1] === remote;
    else if (/^\s*\[/.test(line)) inside = false;
    else if (inside) {
      const m = /^\s*url\s*=\s*(\S+)\s*$/.exec(line);
      if (m) return m[1];
    }
  }
  return undefined;
}

function wrap(h: string | undefined): string[] | undefined {
  return h === undefined ? undefined : [h];
}
