// The one call path (docs/architecture.md, "One host, one call path"). Nothing else executes a tool.
//  1 registry → 2 toolset gate (plan) → 3 envelope → 4 policy programs and posture → 5 combine, and
//  the approver when the result is "approve" → 6 the decision is logged (and synced, for a call that
//  can change something) → 7 execute → 8 the outcome is logged; the result is bounded and shaped.
//  Steps 1–5 are evaluate.ts (explain and prepare stop there); the approver is approve-step.ts.
import { visibleDiff } from "../approval/visible.js";
import { denyApprover } from "../approval/approver.js";
import { AlreadyApplied, Refusal, ToolError, errnoCode } from "../errors.js";
import { LogWriteError, type Durability } from "../audit/log.js";
import { findTool } from "../registry.js";
import type { ToolSpec } from "../tools/define.js";
import { dryRun, isDryRun } from "../tools/dry-run.js";
import { journalFor, keptRecord, withCallId, withShellWrites } from "./undo-journal.js";
import { ShellWrites } from "../sandbox/tree-diff.js";
import { approvedConfigWrites, containmentFor, sandboxMode, sandboxRecord } from "./containment.js";
import { grantProxy } from "./network.js";
import { ControlGuard, undoneNote, type Undone } from "../sandbox/guard.js";
import type { CallGuard } from "../sandbox/call.js";
import { lostReport, type MountHolds } from "../sandbox/holds.js";
import type { BackgroundProcesses } from "../shell/background.js";
import type { PathRef } from "../policy/effect.js";
import { KillAtOnce } from "../process/termination.js";
import type { Evaluation, HostContext, LogSync } from "./context.js";
import { askAbout, networkGate, wanted } from "./approve-step.js";
import { withWhereNote } from "./where.js";
import { boundResult } from "./bound.js";
import type { CallOptions, CallResult } from "./types.js";
import { evaluate } from "./evaluate.js";
import { asError, refused } from "./results.js";
import { quarantinedNeedles } from "../disclose/quarantined.js";
import { disclose, type DiscloseQuery } from "./disclose.js";

/** Results that passed the disclose step already (the executed ones, whose outcome log needs the record). */
const DISCLOSED = new WeakSet<CallResult>();

export async function runCall(
  ctx: HostContext,
  name: string,
  rawArgs: unknown,
  opts: CallOptions,
): Promise<CallResult> {
  const out = await runSteps(ctx, name, rawArgs, opts);
  if (DISCLOSED.has(out)) return out;
  // Refusals, errors before anything ran, blocked logs: their messages pass the gate too.
  const q = { scanner: ctx.scanner, envelope: ctx.policy.envelope, tool: name, session: opts.session ?? "default" };
  return (await disclose(q, out)).shown;
}

async function runSteps(ctx: HostContext, name: string, rawArgs: unknown, opts: CallOptions): Promise<CallResult> {
  // What a killed or failed write left half done is finished or undone first (fs/journal.ts): the plan sees one state.
  if (findTool(name)?.axis === "files.write") ctx.ledger.journal.recover();
  const ev = await evaluate(ctx, name, rawArgs, opts);
  if ("done" in ev) return logRejected(ctx, name, rawArgs, opts, ev.done);
  const net = networkGate(ctx, ev);
  const want = net.want;
  let final = net.final;
  const asking = final;
  /** A call that fails its own checks before anyone is asked, or whose file changed after the yes. */
  let failed: Refusal | ToolError | undefined;

  // 5. approval, when the strictest gate says so
  if (final.action === "approve") {
    // An answer the caller carries (host.prepare, then a person in its own UI) counts only for the prepared bytes.
    const who = opts.approval ? ctx.prepared.approverFor(opts.approval) : (opts.approver ?? ctx.approver);
    const asked = await askAbout(ctx, { ...ev, final }, who ?? denyApprover, want);
    ev.gates.push(asked.decision);
    failed = asked.failed;
    final =
      asked.decision.action === "allow" || failed
        ? asked.decision
        : { ...asked.decision, reason: `${asking.reason}; ${asked.decision.reason}` };
  }

  // The state dir holds the ledger, the locks and the default policy log: while it is gone, nothing
  // runs and nothing is logged (to a deleted file).
  try {
    ctx.state.verify();
  } catch (err) {
    return asError(err);
  }

  // 6. the decision is written before anything runs, and synced first unless the call only reads
  // (a read's decision is synced with the next effect's, or within 100 ms: src/audit/log.ts).
  // A log that fails blocks this and every later call.
  const durability = decisionDurability(ev.tool, ctx.logSync);
  const mode = sandboxMode(ev.gates);
  // The log never holds a secret: a request (evidence) or a reason that quotes one is logged redacted.
  const logged = await forTheLog(ctx, ev.args, final.reason);
  const journal = final.action === "allow" ? journalFor(ev.ctx, ev.tool, ev.env.session) : undefined;
  // A tool whose writes wait for it before their rename has its decision synced on the thread pool,
  // beside the write's own syncs (temp file, pre-images); any other waits for it here, first.
  const overlap = durability === "sync" && final.action === "allow" && ev.tool.awaitsDecisionSync === true;
  let effectId: number;
  let decisionSynced: Promise<void> | undefined;
  try {
    const entry = {
      tool: ev.tool.name,
      session: ev.env.session,
      request: logged.request,
      gates: ev.gates.map((g) => ({ gate: String(g.gate), action: g.action, origin: g.origin ?? String(g.gate) })),
      final: final.action,
      reason: logged.reason,
      ...(ev.sandbox
        ? {
            sandbox: {
              ...sandboxRecord(ev.sandbox, mode, approvedConfigWrites(ev.effect, ev.gates)),
              ...wanted(want),
            },
          }
        : {}),
      ...(journal ? { call_id: journal.callId } : {}),
    };
    if (overlap) ({ effectId, synced: decisionSynced } = ctx.log.decisionSyncing(entry));
    else effectId = ctx.log.decision(entry, durability);
  } catch (err) {
    return logBlocked(err);
  }
  // A decision synced here counts once the syncs already under way have answered too (a read's lines
  // on the timer, another call's decision): the kernel may have told one of them of the writeback
  // error that lost this line (PolicyLog.settled). A write that overlaps its sync waits in `synced`.
  if (final.action === "allow" && durability === "sync" && !overlap) {
    try {
      await ctx.log.settled();
    } catch (err) {
      return logBlocked(err);
    }
  }
  let syncFailure: unknown;
  const syncSettled = decisionSynced?.then(
    () => undefined,
    (err: unknown) => void (syncFailure = err),
  );
  // With a fleet's state store, a call that can change something runs only once its decision is
  // there too: PostgreSQL away is a refusal with the reason, within STORE_WAIT_MS, never a fallback.
  if (final.action === "allow" && durability === "sync" && !ev.refusal && !failed) {
    try {
      await ctx.log.copied(STORE_WAIT_MS);
    } catch (err) {
      const reason = `The decision could not be kept in the state store: ${(err as Error).message}; nothing ran.`;
      try {
        ctx.log.outcome(effectId, "refused", { error: reason });
      } catch {
        // it waits in the RunLog and is written before its next line
      }
      return {
        status: "refused",
        reason,
        hint: "Nothing ran. latch serves calls again once the state store (PostgreSQL) is back: tell the user, and retry in a moment.",
        gate: "log",
      };
    }
  }

  if (ev.refusal) return refused(ev.refusal);
  if (failed) return failed instanceof Refusal ? refused(failed) : asError(failed);
  if (final.action === "deny") {
    if (final.gate === "approval") {
      return {
        status: "refused",
        reason: `This call needs a person's approval: ${final.reason}.`,
        // Only what is true whatever the approver was: the call is over; a retry asks again.
        hint: "Tell the user what you wanted to run and why. Do not retry the same call until they say they will approve it; a retry asks them again (in their client's prompt where it has one, else in the latch console or with `latch approvals` while the call waits).",
        gate: "approval",
      };
    }
    return {
      status: "refused",
      reason: final.reason,
      hint: "This is a policy decision: do not retry the same call.",
      gate: String(final.gate),
    };
  }

  // 7. execute; 8. the outcome is logged, the result bounded and shaped
  // A `.git/config` write a person approved: writable for its step only, its keys checked after (guard.ts).
  const gitConfig = approvedConfigWrites(ev.effect, ev.gates);
  const containment = containmentFor(
    ev.tool,
    { ...ev.ctx, home: ev.ctx.startupEnv.HOME, envelope: ev.ctx.policy.envelope },
    mode,
    gitConfig,
  );
  const approved = ev.gates.some((g) => g.gate === "approval" && g.action === "allow");
  // Before the tree's snapshot and the guard's baseline: the proxy's first import is the one wait here.
  const proxy = await grantProxy(containment, ctx.settings, want, approved);
  // A writable workspace: what git or an editor runs later is checked after the call (sandbox/guard.ts).
  const writable = containment?.confinement?.mode === "workspace-write" ? containment.confinement : undefined;
  const configKeys = containment?.gitConfigSteps ? gitConfig.flatMap((w) => w.write.keys) : undefined;
  // What a writable run changes is listed (from a stat of the tree before and after): undo cannot restore it.
  const shellWrites = writable ? ShellWrites.start(writable.root, ctx.controlPlane) : undefined;
  const undone: Undone[] = [];
  // Last before the try that ends it: a guard begun and never ended would bound every later one (guard-shared.ts).
  // A Refusal instead: an approved `.git/config` write beside another contained process; nothing runs.
  let guard: CallGuard | undefined;
  let notBegun = heldWrite(ctx.background, ev.effect.writes);
  try {
    guard = writable && !notBegun ? guardFor(writable.root, configKeys, writable.holds) : undefined;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    notBegun = err;
  }
  const sandbox = containment && guard ? { ...containment, guard } : containment;
  const mutation = {
    ...ev.env.mutation,
    ...(journal ? { journal: journal.journal } : {}),
    ...(decisionSynced ? { decisionSynced } : {}),
  };
  // While its processes run, a mount their box holds taken off from outside stops them at once (review
  // g21: a call that waited for the user's `git config`, or editor's save of `.env`, for minutes).
  const holds = containment?.contained ? containment.confinement?.holds : undefined;
  const loose = holds ? new AbortController() : undefined;
  const signal = loose ? AbortSignal.any([ev.env.signal, loose.signal]) : ev.env.signal;
  const run = () => execute(ev.ctx, { ...ev, env: { ...ev.env, signal, containment: sandbox, undone, mutation } });
  const unwatch = holds?.watch(() => loose!.abort(new KillAtOnce("its sandbox lost a mount")));
  const unhold = holds ? ctx.background.holdDuring(holds) : undefined; // file tools' writes keep off them

  let executed: CallResult;
  try {
    if (notBegun) executed = refused(notBegun);
    else executed = await (guard && ev.tool.startsProcesses ? ctx.background.duringForeground(run) : run());
    await syncSettled;
    // The decision could not be made durable: the write waited for it and was abandoned (nothing changed).
    if (syncFailure !== undefined && executed.status !== "ok") executed = logBlocked(syncFailure);
    if (guard) for (const item of guard.check()) undone.push(item);
    // A mount a box held taken off from outside (holds.ts), in any mode: said, and the process is gone by now.
    if (containment?.confinement) {
      const lost = lostReport(containment.confinement.holds, containment.confinement.root);
      for (const item of lost) undone.push(item);
      if (loose?.signal.aborted && lost.length) undone.push({ path: lost[0].path, what: STOPPED_LOOSE });
    }
  } finally {
    unwatch?.();
    unhold?.();
    guard?.end(); // a background process it started holds it on (shell/background.ts)
  }
  const ran = withCallId(withShellWrites(withUndone(executed, undone), shellWrites?.report()), journal);
  // 8a. disclose: nothing the call produced leaves latch (log, evidence, client) unscreened.
  const asked = ctx.policy.programs.filter((p) =>
    ev.gates.some((g) => g.disclose && g.origin?.startsWith(`program:${p.path} `)),
  );
  // A workspace its walk cannot list (a fault, not a folder it may not read) gives no quarantined
  // values to screen for: the result is withheld, and the call's report still reaches the model (g42).
  let unlisted: string | undefined;
  try {
    ctx.scanner.setExtra(quarantinedNeedles(ev.ctx.root));
  } catch (err) {
    unlisted = `latch could not list the workspace's quarantined files (${(err as Error).message})`;
  }
  const q: DiscloseQuery = {
    scanner: ctx.scanner,
    envelope: ctx.policy.envelope,
    tool: ev.tool.name,
    session: ev.env.session,
    effect: { axis: ev.effect.axis },
    programs: asked,
    evidence: ctx.log.evidence,
    ...(unlisted !== undefined ? { unlisted } : {}),
  };
  const { shown, record } = await disclose(q, ran);
  const budget = ev.tool.resultBudget?.(ev.env) ?? ctx.settings.local_fs.maxOutputBytes;
  const result: CallResult = shown.status === "ok" ? { ...shown, result: boundResult(shown.result, budget) } : shown;
  DISCLOSED.add(result);
  try {
    const body = result.status === "ok" ? result.result : result;
    const display = result.status === "ok" ? result.display : undefined;
    const disclosure = record
      ? { action: record.action, findings: record.findings, fingerprints: record.fingerprints, origin: record.origin }
      : undefined;
    // The result before the gate changed it, for --policy-evidence-seal (kept only encrypted).
    const raw = record && shown !== ran ? (ran.status === "ok" ? ran.result : ran) : undefined;
    ctx.log.outcome(effectId, result.status, body, ev.env.signal.aborted, display, disclosure, undone, {
      raw,
      network: proxy?.report(),
      preimages: keptRecord(journal),
      // A read's outcome is written after its answer when the caller answers first (MCP).
      soon: opts.answerFirst === true && durability === "write",
    });
  } catch {
    // The effect already ran; its outcome waits in the RunLog and is written before its next line.
  }
  return result;
}

/** The request and reason as the log may hold them: redacted where they quote a secret, withheld if the scan fails. */
async function forTheLog(
  ctx: HostContext,
  request: unknown,
  reason: string,
): Promise<{ request: unknown; reason: string }> {
  try {
    const { redacted } = await ctx.scanner.scan({ request, reason }, "log");
    return redacted as { request: unknown; reason: string };
  } catch {
    return { request: "[withheld: the disclosure scan failed]", reason: "[withheld: the disclosure scan failed]" };
  }
}

/** Said when a call's processes were stopped for a mount their box lost (holds.ts). */
const STOPPED_LOOSE =
  "stopped the call's processes at once (SIGKILL): their sandbox no longer held this path (see the line before), so they could read or write there what the sandbox keeps from them";

/**
 * A write to what a running contained process's box holds by a mount (a read-only `.envrc`, a masked
 * secret, where a held link leads): refused, for latch writes by renaming a new file over the old, which takes the mount off
 * in that box (sandbox/holds.ts), and the process could then write or read it before its watch stops it.
 */
function heldWrite(background: BackgroundProcesses, writes: readonly PathRef[]): Refusal | undefined {
  for (const w of writes) {
    const held = background.holding(w.abs);
    if (held === undefined) continue;
    return new Refusal(
      `\`${w.rel}\` is held by the sandbox of ${held.by} (kept read-only or masked there), and latch ` +
        `writes a file by putting a new one in its place, which would take that hold off. Nothing was written.`,
      `${held.fix}, then make this change again.`,
    );
  }
  return undefined;
}

/**
 * The baseline of the control surface. One that cannot be taken refuses the call before anything runs
 * (review g43: a file that made the look throw switched the guard off for every later call, which ran
 * and was said NOT checked), but for a folder shut by a chmod (EACCES): the box masks such a folder
 * whole, and the check after the call opens what the call shut (reopen.ts). A check after the call
 * that throws is said NOT checked.
 */
function guardFor(root: string, configKeys?: readonly string[], holds?: MountHolds): CallGuard {
  const failed = (err: unknown) => [
    { path: ".", what: `NOT checked (${(err as Error).message}): git's control files and what runs later` },
  ];
  let guard: ControlGuard;
  try {
    guard = ControlGuard.start(root, configKeys, holds);
  } catch (err) {
    if (err instanceof Refusal) throw err; // not begun: the call does not run (guard-shared.ts)
    if (errnoCode(err) === "EACCES") return { check: () => failed(err), hold: () => undefined, end: () => undefined };
    throw new Refusal(
      `latch could not look at git's control files and what runs later in this workspace before the call ` +
        `(${(err as Error).message}), so it could not undo what the call changes there. Nothing ran.`,
      "Remove or repair what the message names, then make the call again; or run this command uncontained.",
    );
  }
  return {
    check: (quick = false) => {
      try {
        return guard.check(quick);
      } catch (err) {
        return failed(err);
      }
    },
    hold: () => guard.hold(),
    end: () => guard.end(),
  };
}

/** The call's result, saying what latch undid: a field of an ok result, a sentence of an error or refusal. */
function withUndone(r: CallResult, undone: Undone[]): CallResult {
  if (undone.length === 0) return r;
  if (r.status === "ok")
    return { ...r, result: { ...(r.result as Record<string, unknown>), undone, undone_note: undoneNote(undone) } };
  const said = ` latch undid what a contained process made: ${undone.map((u) => `${u.path} (${u.what})`).join("; ")}. ${undoneNote(undone)}`;
  return r.status === "error" ? { ...r, message: r.message + said } : { ...r, reason: r.reason + said };
}

/** A call refused before planning (unknown tool, bad arguments) is logged too: a probe leaves a trace. */
async function logRejected(
  ctx: HostContext,
  name: string,
  rawArgs: unknown,
  opts: CallOptions,
  done: CallResult,
): Promise<CallResult> {
  const raw =
    done.status === "error" ? `${done.code}: ${done.message}` : done.status === "refused" ? done.reason : "rejected";
  const { request, reason } = await forTheLog(ctx, rawArgs ?? {}, raw);
  try {
    ctx.log.decision(
      {
        tool: name,
        session: opts.session ?? "default",
        request,
        gates: [{ gate: "registry", action: "deny", origin: "registry" }],
        final: "deny",
        reason,
      },
      "write",
    );
  } catch (err) {
    return logBlocked(err);
  }
  return done;
}

/** Any failure to log is a block: the effect must not run unrecorded. A passing fault blocks only while it lasts. */
function logBlocked(err: unknown): CallResult {
  const passing = err instanceof LogWriteError && err.passing;
  return {
    status: "refused",
    reason: (err as Error).message,
    hint: passing
      ? "Nothing ran. latch serves calls again as soon as the fault clears: tell the user, and retry in a moment."
      : "Nothing ran. Restart latch with a writable --policy-log.",
    gate: "log",
  };
}

/** How long a call waits for its decision to reach a fleet's state store before it is refused. */
const STORE_WAIT_MS = 5000;

/** A decision is fdatasynced before its call runs unless the call only reads and the host syncs effects only. */
export function decisionDurability(tool: ToolSpec, logSync: LogSync): Durability {
  return tool.annotations.readOnly && logSync === "effects" ? "write" : "sync";
}

async function execute(ctx: HostContext, ev: Extract<Evaluation, { tool: ToolSpec }>): Promise<CallResult> {
  if (ev.env.signal.aborted)
    return { status: "error", code: "ECANCELED", message: "The call was cancelled before it ran." };
  try {
    // A dry run (write tools' `dry_run: true`) answers from the approval preview and writes nothing.
    const out = isDryRun(ev.tool, ev.args)
      ? await dryRun(ev.tool, ev.args, ev.plan, ev.env)
      : await ev.tool.run(ev.args, ev.plan, ev.env);
    // Bounded after the disclose step (runSteps), so no cut can split a secret the scanners must see whole.
    return { status: "ok", result: out.result, ...(out.display ? { display: shownDisplay(out.display) } : {}) };
  } catch (err) {
    if (err instanceof Refusal) return refused(err);
    // A retry of a write that landed (expected_sha256): done, and nothing written now.
    if (err instanceof AlreadyApplied)
      return {
        status: "ok",
        result: { already_applied: true, path: err.path, sha256: err.sha256, written: false, note: err.message },
      };
    if (err instanceof ToolError && err.code === "ENOENT") return asError(withWhereNote(ctx, ev.plan.paths, err));
    return asError(err);
  }
}

/**
 * Display data as people get it: a diff's hidden characters (ANSI escapes, lone CRs, bidi controls)
 * escaped exactly as an approval shows them, so a write's diff cannot hide a line on a terminal either.
 */
function shownDisplay(display: Record<string, unknown>): Record<string, unknown> {
  if (typeof display.diff !== "string") return display;
  const shown = visibleDiff(display.diff);
  return { ...display, diff: shown.text, ...(shown.escaped ? { diff_escaped: true } : {}) };
}
