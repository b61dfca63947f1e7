// Syscalls per read + edit_file cycle, counted by strace (load-independent, unlike wall time):
// runs N cycles (--cycles, default 200) of one checkout through createHost in-process, after a
// warm-up, and prints CPU per cycle. Run under strace twice (N and 0 cycles) and subtract, e.g.
//   for n in 0 200; do strace -f -c -e trace=fsync,fdatasync,pwrite64,write,openat,rename,renameat,renameat2 \
//     node --import tsx bench/edit-syscalls.ts --cycles $n /tmp/base711; done
// The difference divided by N is the count per cycle.
import path from "node:path";
import { DEEP_FILE, deepFileHost } from "./deep-file-host.js";
import { REPO } from "./report.js";

const argv = process.argv.slice(2);
const at = argv.indexOf("--cycles");
const cycles = at === -1 ? 200 : Number(argv.splice(at, 2)[1]);
const repo = path.resolve(argv[0] ?? REPO);
const { host, done } = await deepFileHost(repo, "edit-syscalls");
const file = DEEP_FILE;
try {
  let cur = "END";
  const cycle = async (i: number) => {
    await host.call("read_file", { path: file, force: true });
    const r = await host.call("edit_file", { path: file, old_string: cur, new_string: `E${i}` });
    if (r.status !== "ok") throw new Error(JSON.stringify(r));
    cur = `E${i}`;
  };
  for (let i = 0; i < 20; i++) await cycle(i); // warm-up, the same for N = 0
  const c0 = process.cpuUsage();
  for (let i = 0; i < cycles; i++) await cycle(1000 + i);
  const c = process.cpuUsage(c0);
  console.log(
    JSON.stringify({ repo, cycles, cpu_us_per_cycle: cycles ? +((c.user + c.system) / cycles).toFixed(1) : 0 }),
  );
} finally {
  done();
}
