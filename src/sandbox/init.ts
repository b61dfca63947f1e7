// The first program inside the box: it sets the pids rlimit, then starts the real program and tells
// latch how that program ended. bwrap's own init (pid 1 of the new pid namespace) turns a death by
// signal into exit code 128+n, and so does `--json-status-fd` (bwrap 0.8), so `kill -9 $$` and
// `exit 137` looked the same from outside: a crashed program's partial output was shown as if it had
// ended normally. Uncontained, runBounded sees the signal and the caller withholds the output
// (run_tool's ESIGNAL). A tiny perl init (perl is Debian-essential) forks the program, waits, and
// writes the raw wait status to STATUS_FD, a pipe that only the init holds (the program's copy is
// closed before exec). The signals latch sends (TERM on a timeout or process_kill) go once to every
// process group of the run: the init's handlers only keep it alive to report, and the program starts
// a group of its own once its handlers are reset, so a SIGTERM that reached the init's group while the
// program was being forked (and ran the init's handler in the child) is sent again to the new group
// (src/process/termination.ts); the run no longer waits for SIGKILL. Without perl, the program is
// exec'd as before and only the exit code is known.
import { constants } from "node:os";
import type { Launcher } from "./bwrap.js";

/** The descriptor the init writes the program's wait status to (3: bwrap's seccomp filter; 4: the network bridge's channel). */
export const STATUS_FD = 5;

/**
 * argv: the setrlimit system call's number (0: none), the pids limit, file, argv0, args. RLIMIT_NPROC
 * is 6 on every architecture latch knows the number for; a failure is ignored as the shell's `ulimit`
 * was (an existing lower hard limit stays, which is stricter; as root the kernel exempts uid 0 anyway,
 * and the pids cgroup binds). Signal handlers are set before the fork (none kills the init in the gap)
 * and reset in the child before its setpgrp; exec resets them anyway. perl's waitpid restarts after a
 * handler ran. `$!{ENOENT}` loads Errno only when exec failed. The exit code mirrors the program's, as
 * bwrap's init would.
 */
const INIT = [
  'open(my $s, ">&=", ' + STATUS_FD + ') or die "latch init: no status descriptor: $!\\n";',
  "my ($nr, $lim) = splice @ARGV, 0, 2;",
  'syscall($nr + 0, 6, pack("QQ", $lim, $lim)) if $nr;',
  "my @sigs = qw(TERM INT HUP QUIT USR1 USR2 ALRM WINCH CONT);",
  "$SIG{$_} = sub {} for @sigs;",
  "my $p = fork;",
  'if (!defined $p) { print STDERR "latch init: fork: $!\\n"; exit 126 }',
  "if ($p == 0) {",
  '  $SIG{$_} = "DEFAULT" for @sigs; setpgrp(0, 0); close $s; my $f = shift @ARGV;',
  '  exec { $f } @ARGV or do { print STDERR "latch: cannot run $f: $!\\n"; exit($!{ENOENT} ? 127 : 126) };',
  "}",
  "waitpid($p, 0); my $st = $?;",
  'syswrite $s, "$st\\n"; close $s;',
  "exit($st & 127 ? 128 + ($st & 127) : $st >> 8);",
].join("\n");

/** The arguments after bwrap's `--`: the launcher shell, then the init (or the program itself). */
export function launcherArgs(
  launcher: Launcher,
  cmd: { file: string; argv0?: string; args: string[] },
  pidsLimit: number,
  /** Shell lines run before the program (the network bridge's, proxy/bridge.ts), each ending in a newline. */
  prelude = "",
): string[] {
  const rlimit = launcher.setsArgv0 ? `ulimit -u ${pidsLimit}` : `ulimit -p ${pidsLimit}`;
  const limit = prelude ? `${rlimit} 2>/dev/null\n${prelude}:` : rlimit;
  const argv0 = cmd.argv0 ?? cmd.file;
  // No shell at all when the init can set the limit and nothing runs before the program.
  if (launcher.perl && launcher.setrlimit !== undefined && !prelude)
    return [
      launcher.perl,
      "-e",
      INIT,
      "--",
      String(launcher.setrlimit),
      String(pidsLimit),
      cmd.file,
      argv0,
      ...cmd.args,
    ];
  // bash -c: no rc file is read (BASH_ENV is not in the environment: masks.ts ENV_ALLOW). The perl
  // path is one pickLauncher found (no quoting needed); the init is $0, so "$@" is file, argv0, args.
  if (launcher.perl)
    return [
      launcher.shell,
      "-c",
      `${limit} 2>/dev/null; exec ${launcher.perl} -e "$0" -- 0 0 "$@"`,
      INIT,
      cmd.file,
      argv0,
      ...cmd.args,
    ];
  if (launcher.setsArgv0)
    return [launcher.shell, "-c", `${limit} 2>/dev/null; exec -a "$0" "$@"`, argv0, cmd.file, ...cmd.args];
  return [launcher.shell, "-c", `${limit} 2>/dev/null; exec "$0" "$@"`, cmd.file, ...cmd.args];
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

/**
 * How the program ended, from what the init wrote and the exit code bwrap gave: undefined when the
 * init said nothing usable (no perl, killed itself), or when its word disagrees with bwrap's code
 * (which mirrors it), so nothing written there can turn one ending into another.
 */
export function programEnding(
  written: string,
  bwrapExit: number | null,
): { exitCode: number | null; signal: NodeJS.Signals | null } | undefined {
  const m = /^(\d{1,6})\n$/.exec(written);
  if (!m || bwrapExit === null) return undefined;
  const status = Number(m[1]);
  const sig = status & 127;
  if (sig === 0) return status >> 8 === bwrapExit ? { exitCode: status >> 8, signal: null } : undefined;
  const name = SIGNAL_NAMES.get(sig);
  return name !== undefined && 128 + sig === bwrapExit ? { exitCode: null, signal: name } : undefined;
}
