// The two ways a call can end without a result. A Refusal is a normal answer the model can act on
// (policy, preconditions); a ToolError is a failure with a stable code and a message that names the fix.
// Both are caught by the host by class, never by a bare catch, so a denial is never turned into an error.

/** The steps of the call path that decide (docs/architecture.md, "One host, one call path"); a Refusal names one. */
export type Gate = "registry" | "toolset" | "envelope" | "policy" | "approval" | "log" | "execute";

/**
 * Every `code` a ToolError or an error result can carry, with what it means: a closed set, so a code
 * misspelt in src or a test fails tsc. docs/errors.md lists the same codes (test/docs checks it).
 */
export const ERROR_CODES = {
  // Arguments and the call itself
  EINVAL: "an argument is not valid (the message names it and what was expected)",
  EUNKNOWNTOOL: "no tool of that name or alias is listed here",
  EUSAGE: "the CLI's words are off (latch call)",
  ECONFIG: "the configuration cannot be used (latch call)",
  ECANCELED: "the call was cancelled before it finished; nothing was changed",
  ESHUTDOWN: "latch is shutting down; the call did not run",
  EINTERRUPTED: "(policy log only) latch shut down before the call ended",
  EUNSUPPORTED: "this shape or file type does not offer what was asked",
  EUNAVAILABLE: "a part the tool needs is not installed or configured",
  EINTERNAL: "latch failed unexpectedly (a bug: the message says where)",
  // Files and folders
  ENOENT: "the path does not exist",
  EEXIST: "the path exists already",
  EISDIR: "a folder where a file was expected",
  ENOTDIR: "a file where a folder was expected",
  ENOTFILE: "not a regular file (a device, a socket, a pipe)",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted",
  EROFS: "the file system is read-only",
  ENOSPC: "the disk (or the state dir's disk) is full",
  EDQUOT: "the disk quota is used up",
  EXDEV: "the move crosses file systems",
  EIO: "the file could not be read or written",
  EBINARY: "the file holds binary data where text was expected",
  ETOOLARGE: "past a size limit (the message names it)",
  // Edits
  ENOMATCH: "the text to replace is not in the file",
  ECOUNT: "the text to replace is there a different number of times than expected",
  ERANGE: "a line range outside the file",
  ESTALE: "the file changed since it was read",
  EPATCHSYNTAX: "the patch is not in the expected format",
  ELOCKED: "another writer holds the file for too long",
  // latch's own state
  ESTATE: "the state dir or latch.db cannot be used (the message names the fix)",
  ELEDGERBUSY: "another process held latch.db locked for too long",
  // Processes and engines
  ESPAWN: "the program could not be started",
  ESIGNAL: "the program was killed by a signal",
  ETIMEDOUT: "the time limit was reached and the work stopped",
  EENCODING: "the program's output is not valid UTF-8",
  EPIPE: "the background process's input is closed",
  ECLOSED: "no new background process starts: latch is shutting down",
  EBADTOOL: "a catalog entry (run_tool) cannot be used",
  EENGINE: "the search engine (ripgrep) could not be started",
  ECLIENT: "the ACP client refused or failed the request",
  // Media and web
  EPDF: "the PDF could not be read",
  ECONVERT: "the page could not be converted",
  ENOTFOUND: "the host name could not be resolved",
  EFETCH: "the fetch failed",
  EREDIRECTS: "too many redirects",
  ENOTCACHED: "no cached copy of the page",
  EPROVIDER: "the search provider could not be reached or failed",
  EAUTH: "the search provider refused the key",
  ERATELIMIT: "the search provider's rate limit was reached",
  // Attached servers (the gateway)
  EUPSTREAM: "an attached MCP server or OpenAPI service failed, crashed or answered with an error",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** `raw` (a node system error's code) when it is one of ours, else EIO. */
export function ioCode(raw: string | undefined): ErrorCode {
  return raw !== undefined && Object.hasOwn(ERROR_CODES, raw) ? (raw as ErrorCode) : "EIO";
}

export class Refusal extends Error {
  readonly reason: string;
  readonly hint?: string;
  readonly gate: Gate;
  constructor(reason: string, hint?: string, gate: Gate = "toolset") {
    super(reason);
    this.name = "Refusal";
    this.reason = reason;
    this.hint = hint;
    this.gate = gate;
  }
}

/**
 * A retry of a write that already landed (its expected_sha256 and arguments match the session's last
 * write of the file, and the file holds that write's result): answered as done, nothing written.
 */
export class AlreadyApplied extends Error {
  constructor(
    readonly path: string,
    readonly sha256: string,
  ) {
    super("already applied: the file's bytes equal the result of this edit");
    this.name = "AlreadyApplied";
  }
}

export class ToolError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = "ToolError";
    this.code = code;
  }
}

/** One template for every bad-value message: "Expected `timeout` to be a non-negative integer, got `-1`". */
export function expected(name: string, what: string, got: unknown): string {
  return `Expected \`${name}\` to be ${what}, got \`${typeof got === "string" ? got : JSON.stringify(got)}\``;
}

/** The code of a node system error, or undefined for anything else. */
export function errnoCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && typeof (err as { code?: unknown }).code === "string"
    ? (err as { code: string }).code
    : undefined;
}

export function cancelled(): ToolError {
  return new ToolError(
    "ECANCELED",
    "The call was cancelled before it finished; nothing was changed. Retry it if you still need it.",
  );
}
