// An attached stdio server's start in the sandbox against a bare spawn: the time from spawning the
// server to its first tools/list answer, through latch's own transport and the SDK's client, for the
// same server (test/fixtures/gateway/hostile-server.mjs, node) started with `containment = "off"` (the
// peer: a bare spawn with the same environment) and contained (bwrap, no workspace, no network).
// Rounds alternate the two so both see the same machine. Target: the sandbox adds at most 30 ms.
//   node --import tsx bench/gateway-start.ts [--rounds N] [--no-write]
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseConfig } from "../src/config/load.js";
import { stdioTransport } from "../src/gateway/launch.js";
import { Upstream } from "../src/gateway/upstream.js";
import { probeContainment } from "../src/sandbox/probe.js";
import { measuredLine, median, percentile, publish, REPO, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const ROUNDS = argv.includes("--rounds") ? Number(argv[argv.indexOf("--rounds") + 1]) : 30;
const SERVER = path.join(REPO, "test/fixtures/gateway/hostile-server.mjs");

async function main(): Promise<void> {
  const load = watchLoad();
  const startupPath = (process.env.PATH ?? "").split(":").filter((d) => path.isAbsolute(d));
  const probe = await probeContainment(startupPath);
  if (!probe.available) throw new Error(`no sandbox here: ${probe.reason}`);
  const workspace = mkdtempSync(path.join(os.tmpdir(), "latch-bench-ws-"));
  const emptyRoot = mkdtempSync(path.join(os.tmpdir(), "latch-bench-box-"));
  const place = { workspace, controlPlane: [], startupEnv: process.env, startupPath, probe, emptyRoot };
  const server = (containment: string) =>
    parseConfig(
      `[mcp_servers.s]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(SERVER)}]\ncontainment = "${containment}"\n`,
    ).mcpServers![0] as Parameters<typeof stdioTransport>[0];
  const once = async (containment: "off" | "required"): Promise<number> => {
    const cfg = server(containment);
    const up = new Upstream({
      name: "s",
      timeoutMs: 30_000,
      transport: async () => stdioTransport(cfg, place, () => undefined),
      onListChanged: () => undefined,
    });
    const t0 = performance.now();
    await up.listTools();
    const ms = performance.now() - t0;
    await up.close();
    return ms;
  };
  // latch's own work before the spawn (config to argv, environment, the box's mounts and its pids
  // cgroup, given back as a server's end does): in-process CPU and wall, so load matters less.
  const prespawn = async (containment: "off" | "required", n = 200) => {
    const cfg = server(containment);
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < n; i++) await stdioTransport(cfg, place, () => undefined).spec.cleanup?.();
    const wall = (performance.now() - w0) / n;
    const cpu = process.cpuUsage(c0);
    return { wall, cpu: (cpu.user + cpu.system) / 1000 / n };
  };
  const bare: number[] = [];
  const boxed: number[] = [];
  await once("off"); // warm the file cache for both
  await once("required");
  for (let i = 0; i < ROUNDS; i++) {
    bare.push(await once("off"));
    boxed.push(await once("required"));
  }
  const pre = { off: await prespawn("off"), required: await prespawn("required") };
  load.stop();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(emptyRoot, { recursive: true, force: true });
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${median(xs).toFixed(1)} | ${percentile(xs, 90).toFixed(1)} |`;
  const over = median(boxed) - median(bare);
  const section = [
    measuredLine(`node --import tsx bench/gateway-start.ts --rounds ${ROUNDS}`, load),
    "",
    'From spawning an attached stdio server (the hostile test fixture, a node MCP server) to its first tools/list answer, through latch\'s transport and the SDK client. The peer is the same server started bare (`containment = "off"`: the same environment, no sandbox); rounds alternate.',
    "",
    "| start | median (ms) | p90 (ms) |",
    "|---|---|---|",
    row("bare spawn (peer)", bare),
    row("bubblewrap sandbox", boxed),
    "",
    `The sandbox adds ${over.toFixed(1)} ms at the median (target: at most 30 ms); ratio ${(median(boxed) / median(bare)).toFixed(2)}.`,
    "",
    `Before the spawn, per start (200 in a row, in latch's process): bare ${pre.off.cpu.toFixed(2)} ms CPU / ${pre.off.wall.toFixed(2)} ms wall; contained ${pre.required.cpu.toFixed(2)} ms CPU / ${pre.required.wall.toFixed(2)} ms wall (the box's argv, mounts and, as root, its pids cgroup).`,
  ].join("\n");
  if (argv.includes("--no-write")) process.stdout.write(section + "\n");
  else publish("gateway-start", "Attached stdio server start: sandbox against a bare spawn", section);
}

await main();
