// macOS: the same Containment as bubblewrap's, through `sandbox-exec` and a Seatbelt profile written
// for each process (SBPL, the language of Apple's sandbox; codex-rs `seatbelt_base_policy.sbpl` and
// sandbox-runtime's macOS profile are the references). Deny by default; processes, sysctl reads and
// service lookups allowed; reads everywhere but the control plane, the credential stores and the
// workspace's secrets; writes only to the workspace in workspace-write mode (minus the masks of
// masks.ts), to a temp folder of the run's own and to the null devices; the network only when allowed.
// Every exception is written inside the allow rule it narrows (require-all / require-not), so no rule
// depends on which of two matching rules Seatbelt lets win.
//
// Untested here: the suite runs on Linux, where it checks the profile as text and the launch as argv.
// Unlike bubblewrap there is no pid namespace: processes that leave the call's process group and
// session are found by the run mark only (src/process/procs.ts, which reads /proc: not on macOS).
import { execFile } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { credentialStores, sandboxEnvironment, WORKSPACE_READ_ONLY, workspaceMasks } from "./masks.js";
import { scanWorkspace } from "./secrets.js";
import type { Command, Confinement, Containment, Launch, ProbeResult } from "./types.js";
import { realpathOf } from "../fs/realpath.js";

/** Apple's, by absolute path: a `sandbox-exec` earlier on the PATH is not asked. */
const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

const OFF = ' — or set `_containment = "auto"` (run uncontained, with stricter rules) or `"off"`.';

/** What the profile is made from: the confinement, with every path already canonical. */
export interface ProfileInput {
  root: string;
  mode: Confinement["mode"];
  network: boolean;
  /** Unreadable and unwritable: the control plane, the credential stores, the workspace's secrets. */
  hidden: readonly string[];
  /** Inside a writable workspace, kept read-only. */
  readOnly: readonly string[];
  /** The run's own temp folder (TMPDIR), writable in either mode. */
  tmp: string;
}

/** An SBPL string literal. */
export function sbplString(p: string): string {
  return `"${p.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** `(require-not (require-any …))` over paths (each a subpath: a file's subpath is the file). */
function except(paths: readonly string[]): string {
  if (paths.length === 0) return "";
  return ` (require-not (require-any ${paths.map((p) => `(subpath ${sbplString(p)})`).join(" ")}))`;
}

export function seatbeltProfile(p: ProfileInput): string {
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm ipc-posix-sem)",
    "(allow pseudo-tty file-ioctl)",
    "(allow user-preference-read)",
    `(allow file-read*${p.hidden.length ? ` (require-all (subpath "/")${except(p.hidden)})` : ""})`,
    `(allow file-write* (subpath ${sbplString(p.tmp)}) (literal "/dev/null") (literal "/dev/zero") (subpath "/dev/fd") (literal "/dev/tty") (literal "/dev/dtracehelper"))`,
  ];
  if (p.mode === "workspace-write") {
    lines.push(
      `(allow file-write* (require-all (subpath ${sbplString(p.root)})${except([...p.readOnly, ...p.hidden])}))`,
    );
  }
  if (p.network) lines.push("(allow network* system-socket)");
  return lines.join("\n") + "\n";
}

/** A path as Seatbelt sees it: through links (/tmp is /private/tmp), or as given when it does not exist. */
function canonical(p: string): string {
  try {
    return realpathOf(p);
  } catch {
    return p;
  }
}

export class SeatbeltContainment implements Containment {
  readonly kind = "seatbelt";

  constructor(readonly sandboxExec = SANDBOX_EXEC) {}

  launch(cmd: Command, c: Confinement): Launch {
    const scan = scanWorkspace(c.root, c.denied, "strict");
    const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-sbx-"));
    // workspaceMasks lists what exists now (bubblewrap can only mount over that); a Seatbelt rule can
    // also cover a `.git/hooks` or `.bashrc` the process would create, so the names go in as well.
    const readOnly = [...WORKSPACE_READ_ONLY.map((rel) => path.join(c.root, rel)), ...workspaceMasks(c.root, scan)];
    const profile = seatbeltProfile({
      root: canonical(c.root),
      mode: c.mode,
      network: c.network,
      hidden: [...new Set([...c.hidden, ...credentialStores(c.home), ...scan.secrets, ...scan.denied].map(canonical))],
      readOnly: [...new Set(readOnly.map(canonical))],
      tmp: canonical(tmp),
    });
    const env = { ...sandboxEnvironment(cmd.env), TMPDIR: tmp };
    // bash's `exec -a`: the program sees the argv[0] it would see uncontained (macOS has bash 3.2).
    const args = ["-p", profile, "/bin/bash", "-c", 'exec -a "$0" "$@"', cmd.argv0 ?? cmd.file, cmd.file, ...cmd.args];
    return {
      file: this.sandboxExec,
      args,
      cwd: cmd.cwd,
      env,
      cleanup: async () => rmSync(tmp, { recursive: true, force: true }),
    };
  }
}

/** Whether sandbox-exec runs a process under a profile here; `exe` is for tests. */
export function probeSeatbelt(exe = SANDBOX_EXEC): Promise<ProbeResult> {
  try {
    accessSync(exe, constants.X_OK);
  } catch {
    return Promise.resolve({
      available: false,
      reason: `${exe} is not here`,
      fix: `latch contains processes on macOS through Apple's sandbox-exec, which ships with macOS at ${SANDBOX_EXEC}${OFF}`,
    });
  }
  const profile = seatbeltProfile({
    root: "/",
    mode: "read-only",
    network: false,
    hidden: [],
    readOnly: [],
    tmp: "/dev/null",
  });
  return new Promise((resolve) => {
    execFile(
      exe,
      ["-p", profile, "/usr/bin/true"],
      { timeout: 10_000, env: { PATH: "/usr/bin:/bin" } },
      (err, _o, stderr) => {
        if (!err) {
          resolve({ available: true, containment: new SeatbeltContainment(exe), detail: `seatbelt (${exe})` });
          return;
        }
        const said = String(stderr).trim().split("\n").pop() || err.message;
        resolve({
          available: false,
          reason: `${exe} fails here: ${said}`,
          fix: `sandbox-exec cannot apply a profile here (inside another sandbox, say)${OFF}`,
        });
      },
    );
  });
}
