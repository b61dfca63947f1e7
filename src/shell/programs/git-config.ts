// What a git command writes to the repository's own config (`.git/config`), as keys and values a person
// can approve: `git config` (its set, add, unset and section forms, local scope), `git remote add`,
// `git submodule add`. The sandbox keeps `.git/config` read-only; an approved step whose change this
// reads runs with it writable (src/sandbox/call.ts), and a key that makes git run a program is refused
// even then unless the envelope says `shell.allow_git_exec_config = true` (policy/envelope-eval.ts).
// Anything this does not read exactly (another scope, a global option, an abbreviation, `--edit`) is
// no config write here: it runs as before, with `.git/config` read-only.
import type { GitConfigWrite } from "../../policy/effect.js";
import type { ParsedArgs } from "./types.js";
import { configKeyRunsProgram as runsProgram } from "../../fs/git-config.js";

/** `section.key` or `section.sub.section.key`: section and key lowercased, the subsection as given (git's own form). */
function canonicalKey(name: string): string | undefined {
  const m = /^([A-Za-z0-9-]+)\.(?:([^\n]*)\.)?([A-Za-z][A-Za-z0-9-]*)$/.exec(name);
  if (!m) return undefined;
  return m[2] === undefined
    ? `${m[1].toLowerCase()}.${m[3].toLowerCase()}`
    : `${m[1].toLowerCase()}.${m[2]}.${m[3].toLowerCase()}`;
}

const show = (v: string) => JSON.stringify(v);

/** Options of `git config` read here; any other (a scope, `--edit`, `--comment`, an abbreviation) leaves the line alone. */
const CONFIG_MODES = new Set([
  "--add",
  "--replace-all",
  "--unset",
  "--unset-all",
  "--rename-section",
  "--remove-section",
]);
const CONFIG_PLAIN = new Set([
  "--local",
  "--bool",
  "--int",
  "--bool-or-int",
  "--path",
  "--expiry-date",
  "--no-type",
  "--fixed-value",
]);

function configWrite(p: ParsedArgs): GitConfigWrite | undefined {
  let mode: string | undefined;
  for (const o of p.options) {
    if (CONFIG_MODES.has(o.name) && o.value === undefined && mode === undefined) mode = o.name;
    else if (!(CONFIG_PLAIN.has(o.name) && o.value === undefined) && !(o.name === "--type" && o.value !== undefined))
      return undefined;
  }
  const ops = p.operands;
  // git ≥ 2.46 spells the modes as subcommands: `git config set|unset …`.
  if (mode === undefined && (ops[0] === "set" || ops[0] === "unset") && ops.length >= 2) {
    mode = ops[0] === "set" ? "--replace-all" : "--unset-all";
    return keyWrite(mode, ops.slice(1));
  }
  if (mode === "--rename-section" || mode === "--remove-section") {
    const want = mode === "--rename-section" ? 2 : 1;
    if (ops.length !== want || ops.some((s) => !/^[A-Za-z0-9-]+(\.[^\n]+)?$/.test(s))) return undefined;
    const sections = ops.map((s) => {
      const dot = s.indexOf(".");
      return dot < 0 ? s.toLowerCase() : `${s.slice(0, dot).toLowerCase()}${s.slice(dot)}`;
    });
    return {
      changes: [
        mode === "--rename-section" ? `rename section [${ops[0]}] to [${ops[1]}]` : `remove section [${ops[0]}]`,
      ],
      keys: sections.map((s) => `${s}.`),
      // Renaming moves keys into another section (user.fsmonitor → core.fsmonitor): taken to run programs.
      exec: mode === "--rename-section" ? [`${sections[1]}.*`] : [],
    };
  }
  return keyWrite(mode, ops);
}

function keyWrite(mode: string | undefined, ops: string[]): GitConfigWrite | undefined {
  const key = ops[0] === undefined ? undefined : canonicalKey(ops[0]);
  if (key === undefined) return undefined;
  if (mode === "--unset" || mode === "--unset-all") {
    if (ops.length > 2) return undefined;
    return {
      changes: [`unset ${key}${ops[1] !== undefined ? ` (values matching ${show(ops[1])})` : ""}`],
      keys: [key],
      exec: [],
    };
  }
  // `git config name` alone reads; a value pattern (third word) is only for the plain and replace-all forms.
  if (ops.length < 2 || ops.length > (mode === "--add" ? 2 : 3)) return undefined;
  const verb = mode === "--add" ? "add" : mode === "--replace-all" ? "set (every value)" : "set";
  return {
    changes: [`${verb} ${key} = ${show(ops[1])}`],
    keys: [key],
    exec: runsProgram(key, ops[1]) ? [key] : [],
  };
}

/** `git remote add [-t b]… [-m m] [-f] [--[no-]tags] [--mirror=fetch|push] name url`. */
function remoteAdd(p: ParsedArgs): GitConfigWrite | undefined {
  const [, name, url] = p.operands;
  if (p.operands.length !== 3 || !/^[A-Za-z0-9._/-]+$/.test(name)) return undefined;
  const branches: string[] = [];
  let mirror: string | undefined;
  let tags: string | undefined;
  for (const o of p.options) {
    if (o.name === "-t" && o.value !== undefined) branches.push(o.value);
    else if (o.name === "--mirror") mirror = o.value ?? "both";
    else if (o.name === "--tags" || o.name === "--no-tags") tags = o.name === "--tags" ? "--tags" : "--no-tags";
    else if (!(o.name === "-m" && o.value !== undefined) && o.name !== "-f" && o.name !== "--fetch") return undefined;
  }
  const section = `remote.${name}`;
  const refs = branches.length ? branches : ["*"];
  const fetch =
    mirror === "fetch" || mirror === "both"
      ? ["+refs/*:refs/*"]
      : refs.map((b) => `+refs/heads/${b}:refs/remotes/${name}/${b}`);
  const changes = [
    `set ${section}.url = ${show(url)}`,
    ...(mirror === "push" ? [] : fetch.map((f) => `add ${section}.fetch = ${show(f)}`)),
  ];
  if (mirror !== undefined) changes.push(`set ${section}.mirror = "true"`);
  if (tags !== undefined) changes.push(`set ${section}.tagopt = ${show(tags)}`);
  return { changes, keys: [`${section}.`], exec: runsProgram(`${section}.url`, url) ? [`${section}.url`] : [] };
}

/** `git submodule add [-b b] [-f] [--name n] [--depth d] [--] repo [path]`: the submodule's url and active keys. */
function submoduleAdd(p: ParsedArgs, words: readonly string[]): GitConfigWrite | undefined {
  // `--name` and `--depth` take the next word; git's table does not know them, so read the words here.
  const rest = words.slice(words.indexOf("add") + 1);
  let name: string | undefined;
  const ops: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i];
    if (w === "--") {
      for (const item of rest.slice(i + 1)) ops.push(item);
      break;
    }
    if (
      (w === "--name" || w === "--depth" || w === "-b" || w === "--branch" || w === "--reference") &&
      i + 1 < rest.length
    ) {
      if (w === "--name") name = rest[i + 1];
      i++;
    } else if (w.startsWith("--name=")) name = w.slice(7);
    else if (w === "-f" || w === "--force" || w === "-q" || w === "--quiet" || /^--(depth|branch|reference)=/.test(w))
      continue;
    else if (w.startsWith("-")) return undefined;
    else ops.push(w);
  }
  if (p.sub !== "submodule" || ops.length < 1 || ops.length > 2) return undefined;
  const [repo, where] = ops;
  const dir =
    where ??
    repo
      .replace(/\/+$/, "")
      .replace(/\.git$/, "")
      .replace(/^.*[/:]/, "");
  const section = `submodule.${name ?? dir}`;
  return {
    changes: [`set ${section}.url = ${show(repo)}`, `set ${section}.active = "true"`],
    keys: [`${section}.`],
    exec: runsProgram(`${section}.url`, repo) ? [`${section}.url`] : [],
  };
}

/** What `git <args>` writes to the repository's `.git/config`, or undefined (no such write, or one not read exactly). */
export function gitConfigWrite(p: ParsedArgs, words: readonly string[]): GitConfigWrite | undefined {
  if (p.before.length > 0) return undefined; // -C, --git-dir, -c …: another repository or more than a write
  if (p.sub === "config") return configWrite(p);
  if (p.sub === "remote" && p.operands[0] === "add") return remoteAdd(p);
  if (p.sub === "submodule" && p.operands[0] === "add") return submoduleAdd(p, words);
  return undefined;
}
