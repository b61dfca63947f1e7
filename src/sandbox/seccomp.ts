// A seccomp filter that refuses `socket(AF_UNIX, …)` to a contained process without network: the net
// namespace cuts abstract unix sockets and TCP, but a filesystem socket (a daemon's, under /var/tmp,
// a home folder, …) is reached by its path whatever the namespace. sandbox-runtime does the same with a
// native helper; bwrap loads a compiled classic BPF program from a file descriptor (`--seccomp FD`), so
// latch writes the few instructions itself. `socketpair` stays allowed: it makes a connected pair
// reaching nothing outside, and libuv (node) and others use it for their children's pipes.

/** Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h). */
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;
const EPERM = 1;
const AF_UNIX = 1;

/** Offsets in `struct seccomp_data`: nr, arch, instruction pointer, then args[6] (64 bits each; little-endian here). */
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0 = 16;

/** x32 system calls on x86_64 carry this bit in their number: a second table, refused as a whole. */
const X32_BIT = 0x40000000;

interface Arch {
  audit: number;
  socket: number;
  x32: boolean;
}

/** The architectures latch runs on (node's `process.arch`): AUDIT_ARCH_* and the socket system call's number. */
const ARCHES: Partial<Record<NodeJS.Architecture, Arch>> = {
  x64: { audit: 0xc000003e, socket: 41, x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, x32: false },
};

type Insn = { code: number; k: number; jt?: string; jf?: string };

/**
 * The filter for `arch` (default: this process's), as bytes of `struct sock_filter[]`, or undefined on an
 * architecture latch has no table for. A system call of another architecture (a 32-bit program) kills
 * the process: its numbers mean other calls, and i386's socketcall() would pass around the check.
 */
export function unixSocketFilter(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const prog: (Insn | string)[] = [
    { code: LD_W_ABS, k: OFF_ARCH },
    { code: JEQ_K, k: a.audit, jf: "kill" },
    { code: LD_W_ABS, k: OFF_NR },
    ...(a.x32 ? [{ code: JSET_K, k: X32_BIT, jt: "kill" }] : []),
    { code: JEQ_K, k: a.socket, jf: "allow" },
    { code: LD_W_ABS, k: OFF_ARG0 },
    { code: JEQ_K, k: AF_UNIX, jt: "deny", jf: "allow" },
    "allow",
    { code: RET_K, k: RET_ALLOW },
    "deny",
    { code: RET_K, k: RET_ERRNO | EPERM },
    "kill",
    { code: RET_K, k: RET_KILL_PROCESS },
  ];
  return assemble(prog);
}

/** Labels to jump offsets (counted from the next instruction; forward only, at most 255). */
function assemble(prog: (Insn | string)[]): Buffer {
  const at = new Map<string, number>();
  const insns: Insn[] = [];
  for (const p of prog) {
    if (typeof p === "string") at.set(p, insns.length);
    else insns.push(p);
  }
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach((ins, i) => {
    const off = (label?: string) => {
      if (label === undefined) return 0;
      const d = at.get(label)! - (i + 1);
      if (!(d >= 0 && d <= 255)) throw new Error(`seccomp: jump to ${label} out of range`);
      return d;
    };
    buf.writeUInt16LE(ins.code, i * 8);
    buf.writeUInt8(off(ins.jt), i * 8 + 2);
    buf.writeUInt8(off(ins.jf), i * 8 + 3);
    buf.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return buf;
}
