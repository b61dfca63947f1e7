// `latch mcp` over stdio answers its client's first initialize and tools/list before the program
// loads, from the answers the last start with the same inputs gave: loading the program is most of a
// start (bench/RESULTS.md, `start`), and a client lists the tools before it calls one. The entry
// (src/cli/main.ts) names the start by a key — latch's version and build, the arguments, the folder, the
// whole environment — and finds `mcp-answers/<key>.json` in the state dir, which also lists what the
// answers came from, each stamped (Host.listingInputs: the config file by the hash of the text read,
// the policy programs and the seal key by their stat, the roots as given and as resolved and every
// place a skill folder may be by which folder it is, or that there is none). Only when every stamp
// holds, and the state dir and latch.db can be written, are the answers given; anything else (a
// message of another shape, no file, a stamp changed) and the program answers, as before. The program
// then checks: it makes its own answers, and when the tools differ it tells the client to list them
// again (notifications/tools/list_changed); it writes the file when it has none or others. The file
// is in the state dir, which no tool can reach (the control plane): what a model ran cannot put words
// in the next start's instructions; a state dir in the workspace, which a model could write before
// this start took it, keeps none and gives none. A start with no kept answers of its own takes those of the same
// start in another workspace, kept with the root's place marked (elsewhere.ts), else, if it is plain
// (plain-start.ts: a root, no config file, no skill folder), the build's; each with its own root, checked the same way.
import { createHash } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { defaultStateDir } from "../../fs/state-path.js";
import { LATCH_VERSION } from "../../version.js";
import { initializeResult } from "./handshake.js";
import { plainInitialize, plainListTools } from "./plain.js";
import { elsewhereMaterial, markedInputs, rootArgument, type KeptInput } from "./elsewhere.js";
import { mcpOptions, type GivenOption } from "./mcp-args.js";
import { ODD_NAME, PLAIN_FILE, plainRoot, ROOT_MARK, withRoot } from "./plain-start.js";
import { isObject } from "./rpc.js";
import { openStdinReader } from "./stdin-reader.js";
import type { AdoptedStdin } from "./stdio-wire.js";

type Message = Record<string, unknown>;

/** The two answers a start gives from the cache. */
export interface Answers {
  instructions: string;
  tools: unknown[];
}

/** What the entry hands the program (src/cli/program.ts → mcp.ts → stdio.ts). */
export interface EarlyStart {
  /** Names this start's inputs: the program keeps its answers under it. */
  key: string;
  /** fd 0 as read here: the stdio wire takes it over, with what was read and not answered. */
  stdin?: AdoptedStdin;
  /** The initialize answered here. */
  initialize?: Message;
  /** Messages read after it and held for the SDK (notifications/initialized). */
  held: Message[];
  /** The answers given here, for the program to check against its own. */
  sent?: Answers;
  /** A tools/list was answered here. */
  listed: boolean;
  /** Where the answers given here came from: kept by an earlier start (here or in another workspace), or the build's. */
  from?: "kept" | "elsewhere" | "build";
  /** This start but for its root (elsewhere.ts): the program keeps its answers under this key too. */
  elsewhere?: Elsewhere;
}

/** A start's key with its root left out, and its root: canonical, and as given (resolved). */
export interface Elsewhere {
  key: string;
  root: string;
  given: string;
}

/** How long the entry waits for the client's initialize, then for its tools/list, before the program loads. */
const WAIT_INITIALIZE_MS = 20;
const WAIT_LIST_MS = 25;
/** A first line longer than this is the program's to read (the wire's limits, its answers). */
const MAX_EARLY_LINE = 1 << 20;
/** The state dir keeps this many answers files (a start keeps its own and one for elsewhere: two per key). */
const KEEP_FILES = 64;
const DIR = "mcp-answers";
/** A temp file older than this was left by a start that died while writing it. */
const STALE_TEMP_MS = 10 * 60_000;

/** The key of a start: what the answers may depend on that the files listed in the cache do not say. */
export function startKey(args: readonly string[], programFile: string, env: NodeJS.ProcessEnv, cwd: string): string {
  const vars = Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const material = JSON.stringify([LATCH_VERSION, stampOf(programFile), args, cwd, vars]);
  return createHash("sha256").update(material).digest("hex");
}

/** This start but for its root (elsewhere.ts), when it names one root that is a folder; else undefined. */
export function elsewhereOf(
  args: readonly string[],
  programFile: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Elsewhere | undefined {
  const arg = rootArgument(args);
  if (!arg) return undefined;
  try {
    const given = path.resolve(cwd, arg.value);
    if (!statSync(given).isDirectory()) return undefined;
    // Not realpathOf: the entry's early answers load a dozen modules at most (test/cli/lazy-loads.test.ts),
    // and this is the user's own argument, resolved once per start.
    // eslint-disable-next-line no-restricted-syntax
    const root = realpathSync.native(given);
    if (ODD_NAME.test(root)) return undefined;
    const material = elsewhereMaterial(args, env, cwd, root);
    if (!material) return undefined;
    const key = createHash("sha256")
      .update(JSON.stringify([LATCH_VERSION, stampOf(programFile), material]))
      .digest("hex");
    return { key, root, given };
  } catch {
    return undefined; // a root that cannot be looked at: the program says what is wrong with it
  }
}

/**
 * What a file is now (links followed): which file (device and inode), and by content also its mode,
 * size and times; by text the sha256 of its text (the config file: its host gives the hash of the text
 * it read, so an edit after that read is never taken for it); "absent" when there is none, or the error
 * that stopped the stat. A folder's times move with every entry made in it: a root goes by identity.
 */
export function stampOf(p: string, by: Input["by"] = "content"): string {
  try {
    if (by === "text") {
      if (!existsSync(p)) return "absent";
      return `sha256:${createHash("sha256").update(readFileSync(p, "utf8")).digest("hex")}`;
    }
    const st = statSync(p, { bigint: true, throwIfNoEntry: false });
    if (st === undefined) return "absent";
    if (by === "identity") return `${st.dev}:${st.ino}`;
    return `${st.dev}:${st.ino}:${st.mode}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch (err) {
    return `error:${(err as NodeJS.ErrnoException).code ?? "?"}`;
  }
}

/** A file the answers came from (Host.listingInputs), with its stamp when the host took it. */
export interface Input {
  path: string;
  by: "content" | "identity" | "text";
  stamp?: string;
}

/** The state dir this start uses: the last --state-dir, else the default (as hostFromFlags and createHost). */
export function stateDirOf(options: readonly GivenOption[], env: NodeJS.ProcessEnv): string {
  const dir = options.filter((o) => o.name === "--state-dir").pop()?.value;
  return dir !== undefined ? path.resolve(dir) : defaultStateDir(env);
}

interface CacheFile {
  v: 2;
  /** Each file the answers came from: its path, how it is stamped, its stamp then (ROOT_MARK for the root, elsewhere). */
  inputs: KeptInput[];
  instructions: string;
  tools: unknown[];
}

/**
 * The answers kept under `key`, if every file they came from is as it was. With `root`, the answers were
 * kept with the root's place marked (elsewhere.ts): they and their inputs are read with this root there.
 */
export function keptAnswers(stateDir: string, key: string, root?: string): Answers | undefined {
  const here = (s: string) => (root === undefined ? s : withRoot(s, root));
  let c: CacheFile;
  try {
    c = JSON.parse(readSmallFile(path.join(stateDir, DIR, `${key}.json`))) as CacheFile;
  } catch {
    return undefined; // none yet, unreadable, not a plain file or too large: the program answers
  }
  const answers = answersIn(c, 2);
  if (!answers) return undefined;
  // A file kept by a start always names what its answers came from (the config file at least).
  if (!Array.isArray(c.inputs) || c.inputs.length === 0) return undefined;
  for (const input of c.inputs as unknown[]) {
    if (!Array.isArray(input)) return undefined;
    const [file, by, stamp] = input as unknown[];
    if (typeof file !== "string" || (by !== "content" && by !== "identity" && by !== "text")) return undefined;
    if (stampOf(here(file), by) !== stamp) return undefined;
  }
  return { instructions: here(answers.instructions), tools: answers.tools };
}

/** A file's answers, if it is of version `v` and holds instructions and tools of the right shape. */
function answersIn(c: unknown, v: number): Answers | undefined {
  if (!isObject(c) || c.v !== v || typeof c.instructions !== "string" || !Array.isArray(c.tools)) return undefined;
  return c.tools.every(isTool) ? { instructions: c.instructions, tools: c.tools } : undefined;
}

/**
 * The build's answers for a plain start (plain-start.ts), with this start's root in the instructions;
 * undefined for any other start, or when the build made none (a run from src/, a build whose training
 * run failed).
 */
function buildAnswers(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  programFile: string,
): Answers | undefined {
  const root = plainRoot(args, env, cwd);
  if (root === undefined) return undefined;
  let answers: Answers | undefined;
  try {
    answers = answersIn(JSON.parse(readSmallFile(path.join(path.dirname(programFile), PLAIN_FILE))), 1);
  } catch {
    return undefined;
  }
  if (!answers?.instructions.includes(ROOT_MARK)) return undefined;
  return { instructions: withRoot(answers.instructions, root), tools: answers.tools };
}

/** The longest kept file read (a tool list is ~40 KB): anything larger is not one. */
const MAX_FILE_BYTES = 1 << 20;

/** A regular file's text, read through one descriptor: no link followed, a FIFO or device refused, not blocked on. */
function readSmallFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) throw new Error("not a kept answers file");
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.toString("utf8", 0, got);
  } finally {
    closeSync(fd);
  }
}

/** A tool as tools/list gives one: an object with a string name and an object input schema. */
function isTool(t: unknown): boolean {
  return isObject(t) && typeof t.name === "string" && isObject(t.inputSchema);
}

/**
 * The state dir and its ledger can be written, or the nearest folder above a missing state dir can
 * (lstat: a dangling link on the way is not missing, and the program could not make the folder there).
 * Where they cannot (a mode or a mount changed since the last start), the program answers, and stops
 * with the reason before it does, as a start without answers.
 */
export function stateDirWritable(dir: string): boolean {
  const missing = (p: string) => lstatSync(p, { throwIfNoEntry: false }) === undefined;
  try {
    // A file where a folder should be throws ENOTDIR at the lstat of a name under it (here or below).
    let up = dir;
    while (missing(up) && path.dirname(up) !== up) up = path.dirname(up);
    accessSync(up, constants.W_OK | constants.X_OK);
    const db = path.join(dir, "latch.db");
    if (up === dir && !missing(db)) accessSync(db, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The workspaces a start names: each `--root` (resolved), else the folder it starts in. */
function workspacesNamed(options: readonly GivenOption[], cwd: string): string[] {
  const roots = options.filter((o) => o.name === "--root").map((o) => path.resolve(cwd, o.value ?? ""));
  return roots.length > 0 ? roots : [cwd];
}

/** Whether the state dir is one of `folders` or inside one, by name or by real path (either side's links followed). */
export function stateDirInside(stateDir: string, folders: readonly string[]): boolean {
  const forms = (p: string) => {
    const abs = path.resolve(p);
    try {
      // Not realpathOf, as in elsewhereOf: a few places, once per start.
      // eslint-disable-next-line no-restricted-syntax
      return [abs, realpathSync.native(abs)];
    } catch {
      return [abs]; // not there (yet): by name only
    }
  };
  const places = folders.flatMap(forms);
  return forms(stateDir).some((d) =>
    places.some((f) => d === f || d.startsWith(f.endsWith(path.sep) ? f : f + path.sep)),
  );
}

/** Keeps this start's answers under `key` (written whole, then renamed in); the oldest files past KEEP_FILES go. */
export function keepAnswers(stateDir: string, key: string, inputs: readonly Input[], answers: Answers): void {
  writeKept(stateDir, key, { v: 2, inputs: stamped(inputs), instructions: answers.instructions, tools: answers.tools });
}

/**
 * Keeps this start's answers for a start elsewhere (elsewhere.ts): `instructions` are the host's for
 * the root's mark (the caller checked they are its own with its root there). Nothing is kept when the
 * answers may hang on the workspace beyond its name (markedInputs), or the tools name the root.
 */
export function keepElsewhere(
  stateDir: string,
  where: Elsewhere,
  inputs: readonly Input[],
  instructions: string,
  tools: unknown[],
): boolean {
  const marked = markedInputs(stamped(inputs), where.root, where.given);
  if (!marked || !instructions.includes(ROOT_MARK)) return false;
  const listed = JSON.stringify(tools);
  const named = (p: string) => listed.includes(p) || listed.includes(JSON.stringify(p).slice(1, -1));
  if (named(where.root) || named(where.given)) return false;
  writeKept(stateDir, where.key, { v: 2, inputs: marked, instructions, tools });
  return true;
}

/** Removes the answers kept under `key`, if any. */
export function dropKept(stateDir: string, key: string): void {
  rmSync(path.join(stateDir, DIR, `${key}.json`), { force: true });
}

const stamped = (inputs: readonly Input[]): KeptInput[] =>
  inputs.map((i) => [i.path, i.by, i.stamp ?? stampOf(i.path, i.by)]);

/** A kept file, written whole then renamed in; the oldest files past KEEP_FILES go. */
function writeKept(stateDir: string, key: string, file: CacheFile): void {
  const dir = path.join(stateDir, DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.${key}.${process.pid}.tmp`);
  writeFileSync(temp, JSON.stringify(file), { mode: 0o600 });
  renameSync(temp, path.join(dir, `${key}.json`));
  const names = readdirSync(dir);
  // Temp files a start that died mid-write left: gone after a while (one writing now is seconds old).
  for (const n of names.filter((m) => m.endsWith(".tmp"))) {
    const t = statSync(path.join(dir, n), { throwIfNoEntry: false })?.mtimeMs;
    if (t !== undefined && Date.now() - t > STALE_TEMP_MS) rmSync(path.join(dir, n), { force: true });
  }
  const kept = names.filter((n) => n.endsWith(".json"));
  if (kept.length <= KEEP_FILES) return;
  const byAge = kept
    .map((n) => ({ n, t: statSync(path.join(dir, n), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => a.t - b.t);
  // force: another start may prune the same file at the same time.
  for (const { n } of byAge.slice(0, kept.length - KEEP_FILES)) rmSync(path.join(dir, n), { force: true });
}

/** Whether two starts' answers are the same, each part apart (the tools can be corrected; the instructions cannot). */
export function sameAnswers(a: Answers, b: Answers): { tools: boolean; instructions: boolean } {
  return {
    tools: JSON.stringify(a.tools) === JSON.stringify(b.tools),
    instructions: a.instructions === b.instructions,
  };
}

/**
 * The entry's part, for `latch mcp` over stdio: with answers kept for this start's key, reads the
 * client's first messages from fd 0 and answers a plain initialize and a plain tools/list from them,
 * waiting for each a few ms at most; then hands fd 0, what else it read and what it answered to the
 * program. Without answers it reads nothing: the program reads fd 0 as before.
 */
export async function answerFromCache(
  args: readonly string[],
  programFile: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<EarlyStart> {
  const cwd = process.cwd(); // readable: the entry checked it
  const key = startKey(args, programFile, env, cwd);
  const start: EarlyStart = { key, held: [], listed: false };
  // The arguments as the program will read them; where that is not certain, the program answers.
  const options = mcpOptions(args);
  if (!options) return start;
  const stateDir = stateDirOf(options, env);
  const writable = stateDirWritable(stateDir);
  // A state dir in the workspace was a folder the model's tools could write before this start: what
  // is there is not taken as kept answers (the program keeps none there either, so needs no key for it).
  const trusted = writable && !stateDirInside(stateDir, workspacesNamed(options, cwd));
  if (trusted) start.elsewhere = elsewhereOf(args, programFile, env, cwd);
  const kept = trusted ? keptAnswers(stateDir, key) : undefined;
  const moved =
    trusted && !kept && start.elsewhere ? keptAnswers(stateDir, start.elsewhere.key, start.elsewhere.root) : undefined;
  const answers = kept ?? moved ?? (writable ? buildAnswers(args, env, cwd, programFile) : undefined);
  const reader = answers && openStdinReader();
  if (!answers || !reader) return start;
  start.from = kept ? "kept" : moved ? "elsewhere" : "build";
  const stdin: AdoptedStdin = { reader, pending: [] };
  start.stdin = stdin;
  // A stdout that fails now (the client stopped reading) is the wire's to report, as it would be later.
  process.stdout.on("error", (err: Error) => void (stdin.outFailed ??= err));
  const send = (m: Message) => void process.stdout.write(JSON.stringify(m) + "\n");
  return new Promise((resolve) => {
    let part: Buffer[] = [];
    let partBytes = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearImmediate(late);
      if (partBytes > 0) stdin.pending.push(Buffer.concat(part));
      reader.sink = (chunk) => void stdin.pending.push(Buffer.from(chunk));
      resolve(start);
    };
    // Until the wire listens: a read error, and the end (emitted at once, then the socket is destroyed:
    // the wire would never hear of it, and a client gone would leave its calls running).
    reader.socket.once("error", (err: Error) => {
      stdin.failed ??= err;
      finish();
    });
    reader.socket.once("end", () => {
      stdin.ended = true;
      finish();
    });
    // A wait that ends lets the loop read fd 0 once more first (its poll comes after the timers): on a
    // busy machine the setup alone can outlast it, with the client's line already in the pipe.
    let late: NodeJS.Immediate | undefined;
    const waited = () => void (late = setImmediate(finish));
    let timer = setTimeout(waited, WAIT_INITIALIZE_MS);
    /** One whole line: answered here (true), or the program's, with all that follows it. */
    const line = (bytes: Buffer): boolean => {
      let m: unknown;
      try {
        m = JSON.parse(bytes.toString("utf8"));
      } catch {
        return false;
      }
      if (!isObject(m)) return false;
      if (!start.initialize) {
        if (!plainInitialize(m)) return false;
        start.initialize = m;
        start.sent = answers;
        const params = m.params as Message;
        send({
          jsonrpc: "2.0",
          id: m.id,
          result: initializeResult(params.protocolVersion as string, answers.instructions),
        });
        clearTimeout(timer);
        clearImmediate(late);
        timer = setTimeout(waited, WAIT_LIST_MS);
        return true;
      }
      if (m.method === "notifications/initialized" && m.id === undefined) {
        start.held.push(m);
        return true;
      }
      if (!plainListTools(m)) return false;
      send({ jsonrpc: "2.0", id: m.id, result: { tools: answers.tools } });
      start.listed = true;
      return true;
    };
    reader.sink = (chunk) => {
      let from = 0;
      while (!done && from < chunk.length) {
        const nl = chunk.indexOf(10, from);
        if (nl === -1 || partBytes + nl - from > MAX_EARLY_LINE) break;
        const whole = Buffer.concat([...part, chunk.subarray(from, nl)]);
        if (!line(whole)) {
          part = [whole, Buffer.from("\n")];
          partBytes = whole.length + 1;
          from = nl + 1;
          finish();
          break;
        }
        part = [];
        partBytes = 0;
        from = nl + 1;
        if (start.listed) finish();
      }
      if (from < chunk.length) {
        if (done) stdin.pending.push(Buffer.from(chunk.subarray(from)));
        else {
          part.push(Buffer.from(chunk.subarray(from)));
          partBytes += chunk.length - from;
          if (partBytes > MAX_EARLY_LINE) finish();
        }
      }
    };
  });
}
