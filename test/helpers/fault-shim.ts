// A fault shim for real latch processes: an LD_PRELOAD library that wraps libc's link, unlink, rename,
// mkdir, rmdir, fsync and fdatasync (what node's fs and SQLite call for them on Linux; the last two
// name the file their descriptor holds) and, for the Nth call naming a chosen file,
// fails it with EIO, or SIGKILLs the whole process just before or just after it. Faults are given in
// LATCH_FAULT: `op:name:n:action` rules, comma-separated (name: the file's last path component, or a
// prefix ending in `*`; for link and rename, the new name's; action: EIO, KILL or KILLAFTER, or
// EIOGATE: a failing disk's slow EIO, which makes the file LATCH_FAULT_MARK names and holds the call
// until the file LATCH_FAULT_GATE names exists, at most 10 s, then fails it; GATE: held so, then
// made). n = 0 takes every call, and its mark and gate files end in `.N`, the call's number. It is
// compiled with the machine's C compiler; without one the test fails loudly with the fix. It lives in
// a plain temp folder (test/helpers/plain-tmp.ts): LD_PRELOAD splits at spaces and colons, and the
// dynamic loader only warns and runs on when it cannot load the library, so a shim under a TMPDIR with
// a space would silently inject nothing. Each build checks that the shim loads and fails a call.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { plainTmpParents } from "./plain-tmp.js";

const SOURCE = String.raw`
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rule { char op[16]; char name[256]; int n; int seen; char action[16]; };
static struct rule rules[8];
static int nrules;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  const char *e = getenv("LATCH_FAULT");
  if (!e) return;
  char buf[4096], *save;
  strncpy(buf, e, sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  for (char *r = strtok_r(buf, ",", &save); r && nrules < 8; r = strtok_r(NULL, ",", &save)) {
    struct rule *x = &rules[nrules];
    if (sscanf(r, "%15[^:]:%255[^:]:%d:%15s", x->op, x->name, &x->n, x->action) == 4) nrules++;
  }
}

/* Which call of an every-call rule (n = 0) matched: its gate and mark files carry the number. */
static __thread int callno;

static struct rule *match(const char *op, const char *p) {
  pthread_once(&once, load);
  const char *slash = strrchr(p, '/');
  const char *b = slash ? slash + 1 : p;
  for (int i = 0; i < nrules; i++) {
    struct rule *x = &rules[i];
    size_t l = strlen(x->name);
    if (strcmp(x->op, op)) continue;
    if (x->name[l - 1] == '*' ? strncmp(b, x->name, l - 1) : strcmp(b, x->name)) continue;
    int seen = __sync_add_and_fetch(&x->seen, 1);
    if (x->n == 0 || seen == x->n) {
      callno = x->n == 0 ? seen : 0;
      return x;
    }
  }
  return NULL;
}

/* EIOGATE, GATE: say the call is held (the mark), then wait for the gate (at most 10 s). */
static void hold(void) {
  const char *mark = getenv("LATCH_FAULT_MARK"), *gate = getenv("LATCH_FAULT_GATE");
  char m[4096], g[4096];
  if (mark && callno) { snprintf(m, sizeof m, "%s.%d", mark, callno); mark = m; }
  if (gate && callno) { snprintf(g, sizeof g, "%s.%d", gate, callno); gate = g; }
  if (mark) { FILE *f = fopen(mark, "w"); if (f) fclose(f); }
  struct stat st;
  for (int i = 0; gate && i < 1000 && stat(gate, &st) != 0; i++) usleep(10000);
}

#define WRAP(op, sig, call, path)                                       \
  int op sig {                                                          \
    static int (*real) sig;                                             \
    if (!real) real = dlsym(RTLD_NEXT, #op);                            \
    struct rule *r = match(#op, path);                                  \
    if (r && !strcmp(r->action, "KILL")) kill(getpid(), SIGKILL);      \
    if (r && !strcmp(r->action, "EIO")) { errno = EIO; return -1; }     \
    if (r && !strcmp(r->action, "EIOGATE")) { hold(); errno = EIO; return -1; } \
    if (r && !strcmp(r->action, "GATE")) hold();                       \
    int ret = real call;                                                \
    if (r && !strcmp(r->action, "KILLAFTER")) kill(getpid(), SIGKILL); \
    return ret;                                                         \
  }

WRAP(link, (const char *a, const char *b), (a, b), b)
WRAP(unlink, (const char *a), (a), a)
WRAP(rename, (const char *a, const char *b), (a, b), b)
WRAP(mkdir, (const char *a, mode_t m), (a, m), a)
WRAP(rmdir, (const char *a), (a), a)

/* fsync and fdatasync name their file by its descriptor: the name is the link in /proc/self/fd. */
static const char *fdname(int fd, char *buf, size_t n) {
  char p[64];
  snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
  ssize_t l = readlink(p, buf, n - 1);
  buf[l < 0 ? 0 : l] = 0;
  return buf;
}
static __thread char fdbuf[4096];
WRAP(fsync, (int fd), (fd), fdname(fd, fdbuf, sizeof fdbuf))
WRAP(fdatasync, (int fd), (fd), fdname(fd, fdbuf, sizeof fdbuf))
`;

export interface FaultShim {
  /** The library's path, for LD_PRELOAD. */
  lib: string;
  cleanup(): void;
}

/** Compiles the shim into a new plain temp folder, checks that it loads and injects, and returns it. */
export function buildFaultShim(): FaultShim {
  const failed: string[] = [];
  for (const parent of plainTmpParents("the fault shim (LD_PRELOAD splits paths at spaces and colons)")) {
    const dir = mkdtempSync(path.join(parent, "latch-fault-"));
    const lib = compile(dir);
    const why = probe(dir, lib);
    if (why === undefined) return { lib, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    rmSync(dir, { recursive: true, force: true });
    failed.push(`${parent}: ${why}`);
  }
  throw new Error(
    `the fault shim does not load from any temp folder (${failed.join("; ")}): set TMPDIR to a folder without spaces or colons on a file system that allows executables (not mounted noexec)`,
  );
}

function compile(dir: string): string {
  const src = path.join(dir, "latch-fault.c");
  const lib = path.join(dir, "latch-fault.so");
  writeFileSync(src, SOURCE);
  try {
    execFileSync("cc", ["-shared", "-fPIC", "-O1", "-o", lib, src, "-ldl", "-lpthread"], { stdio: "pipe" });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`this test compiles a fault shim: install a C compiler (cc): ${(err as Error).message}`, {
      cause: err,
    });
  }
  return lib;
}

/** Undefined when a process given the shim has its mkdir fail with EIO as told; else what happened. */
function probe(dir: string, lib: string): string | undefined {
  const target = path.join(dir, "latch-fault-probe");
  const r = spawnSync(
    process.execPath,
    ["-e", `try { require("fs").mkdirSync(${JSON.stringify(target)}); } catch (e) { process.stdout.write(e.code); }`],
    { encoding: "utf8", env: { ...process.env, LD_PRELOAD: lib, LATCH_FAULT: "mkdir:latch-fault-probe:1:EIO" } },
  );
  return r.stdout === "EIO"
    ? undefined
    : `mkdir was not failed (${(r.stdout + r.stderr).trim() || `exit ${r.status}`})`;
}
