// A real PostgreSQL server for the fleet tests: initdb in a temp folder, pg_ctl on a Unix socket folder
// and a free loopback port, trust auth for loopback only, stopped (and its folder removed) at the end.
// PostgreSQL refuses to run as root, so under root the server runs as nobody, in a folder nobody can
// enter. What cannot be arranged fails with the cause and the fix, never a skip.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const NOBODY = 65534;

export interface PgServer {
  /** postgres://latch@127.0.0.1:PORT/latch */
  url: string;
  port: number;
  dataDir: string;
  /** kill -9 of the postmaster (its backends exit on their own when they see it gone). */
  kill9(): void;
  /** Start it again on the same port, after a stop or kill9. */
  start(): void;
  stop(): void;
  /** Run SQL with psql as the server's superuser; returns stdout. */
  psql(sql: string): string;
  /** Remove everything (stop first). */
  destroy(): void;
}

function binDir(): string {
  for (const v of ["17", "16", "15", "14"]) {
    const d = `/usr/lib/postgresql/${v}/bin`;
    if (existsSync(path.join(d, "initdb"))) return d;
  }
  throw new Error(
    "the fleet tests start a real PostgreSQL server, and initdb is not installed: apt-get install postgresql (.ci/run does)",
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A folder the server's user can enter (every parent searchable), made for it. */
function serverFolder(asNobody: boolean): string {
  for (const dir of new Set([os.tmpdir(), "/tmp", "/var/tmp"])) {
    if (!existsSync(dir)) continue;
    const base = realpathSync(mkdtempSync(path.join(dir, "latch-pg-")));
    if (!asNobody) return base;
    chmodSync(base, 0o755);
    const ok =
      spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "test", "-x", base]).status ===
      0;
    if (ok) {
      chownSync(base, NOBODY, NOBODY);
      return base;
    }
    rmSync(base, { recursive: true, force: true });
  }
  throw new Error(
    "PostgreSQL refuses root, so the test runs it as nobody, and nobody can enter none of TMPDIR, /tmp, /var/tmp; point TMPDIR at a folder whose parents others may search",
  );
}

export async function startPostgres(): Promise<PgServer> {
  const bin = binDir();
  const asNobody = process.getuid?.() === 0;
  const base = serverFolder(asNobody);
  const dataDir = path.join(base, "data");
  const sockDir = path.join(base, "sock");
  const logFile = path.join(base, "server.log");
  mkdirSync(sockDir, { mode: 0o700 });
  if (asNobody) chownSync(sockDir, NOBODY, NOBODY);
  const as = (cmd: string, args: string[]) =>
    asNobody
      ? (["setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", cmd, ...args]] as const)
      : ([cmd, args] as const);
  const run = (cmd: string, args: string[], input?: string) => {
    const [c, a] = as(cmd, args);
    return execFileSync(c, [...a], { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"], cwd: base });
  };
  try {
    run(path.join(bin, "initdb"), ["-D", dataDir, "-U", "latch", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  } catch (err) {
    throw new Error(`initdb failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`, {
      cause: err,
    });
  }
  const port = await freePort();
  const opts = `-k ${sockDir} -p ${port} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => {
    // A killed postmaster leaves its backends for a moment: start again once they are gone.
    for (let i = 0; ; i++) {
      try {
        run(path.join(bin, "pg_ctl"), ["-D", dataDir, "-o", opts, "-l", logFile, "-w", "-t", "60", "start"]);
        return;
      } catch (err) {
        if (i >= 20)
          throw new Error(`pg_ctl start failed: ${readFileSync(logFile, "utf8").slice(-2000)} ${String(err)}`, {
            cause: err,
          });
        spawnSync("sleep", ["0.5"]);
      }
    }
  };
  start();
  const psql = (sql: string) =>
    run(
      path.join(bin, "psql"),
      [
        "-X",
        "-q",
        "-A",
        "-t",
        "-h",
        sockDir,
        "-p",
        String(port),
        "-U",
        "latch",
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
      ],
      sql,
    );
  psql("CREATE DATABASE latch;");
  const server: PgServer = {
    url: `postgres://latch@127.0.0.1:${port}/latch`,
    port,
    dataDir,
    kill9() {
      const pid = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(pid, "SIGKILL");
      // Its backends see the postmaster gone and exit; wait for the port to close.
      for (let i = 0; i < 100; i++) {
        if (spawnSync("pgrep", ["-P", String(pid)]).status !== 0) break;
        spawnSync("sleep", ["0.1"]);
      }
    },
    start,
    stop() {
      try {
        run(path.join(bin, "pg_ctl"), ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } catch {
        // not running
      }
    },
    psql: (sql) =>
      run(
        path.join(bin, "psql"),
        [
          "-X",
          "-q",
          "-A",
          "-t",
          "-h",
          sockDir,
          "-p",
          String(port),
          "-U",
          "latch",
          "-d",
          "latch",
          "-v",
          "ON_ERROR_STOP=1",
        ],
        sql,
      ),
    destroy() {
      server.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
  process.once("exit", () => server.destroy());
  return server;
}
