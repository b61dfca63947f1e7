// Hosts with attached servers for the gateway's tests: a fixture outside /tmp (the sandbox's private
// /tmp would hide it from a contained server without any mask doing the work), a fake home with a key
// in ~/.ssh, and agents.toml written as a user writes it.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseConfig } from "../../src/config/load.js";
import type { Host, HostOptions } from "../../src/host/create-host.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const HOSTILE = path.resolve(here, "../fixtures/gateway/hostile-server.mjs");
export const EVERYTHING = path.resolve(
  here,
  "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const FILESYSTEM = path.resolve(
  here,
  "../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

/** What a stolen key would read as. */
const SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nfixture-key-material\n";
/** A secret the test's environment holds, referenced by a server's config. */
export const TOKEN = "fixture-token-7f3a9c1e5b2d4680";

export interface GatewayFixture extends Fixture {
  home: string;
  /** A host over agents.toml text (the config file is written in the fixture's base). */
  /** `approve`: pin every server's tools first, as `latch servers approve` does (default). */
  attach(toml: string, opts?: Partial<HostOptions>, approve?: boolean): Promise<Host>;
}

export function gatewayFixture(prefix: string): GatewayFixture {
  const fx = makeFixture(prefix, "/var/tmp");
  const home = path.join(fx.base, "home");
  mkdirSync(path.join(home, ".ssh"), { recursive: true });
  writeFileSync(path.join(home, ".ssh", "id_ed25519"), SSH_KEY);
  return {
    ...fx,
    home,
    async attach(toml, opts = {}, approve = true) {
      const file = path.join(fx.base, "agents.toml");
      writeFileSync(file, toml);
      const host = await fx.host({
        config: parseConfig(toml, file),
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          LATCH_FIXTURE_TOKEN: TOKEN,
          UNRELATED_SECRET: "do-not-pass-me-123",
        },
        ...(toml.includes("[envelopes.gw]") ? { envelope: "gw" } : {}),
        ...opts,
      });
      // What a person does once per server: review its tools and pin them (`latch servers approve`).
      if (approve)
        for (const s of host.gateway?.status() ?? []) if (s.state === "ready") await host.approveServer(s.name);
      return host;
    },
  };
}

/** A `[mcp_servers.NAME]` table running a node script, with more keys as TOML lines. */
export function nodeServer(name: string, script: string, ...lines: string[]): string {
  return [
    `[mcp_servers.${name}]`,
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(script)}]`,
    ...lines,
    "",
  ].join("\n");
}

/** An envelope `gw` over `base` whose tools table is these patterns. */
export function envelope(tools: Record<string, string>, base = "default"): string {
  const rows = Object.entries(tools).map(([p, a]) => `${JSON.stringify(p)} = "${a}"`);
  return [`[envelopes.gw]`, `extends = "${base}"`, `[envelopes.gw.tools]`, ...rows, ""].join("\n");
}

export function text(r: unknown): string {
  return JSON.stringify(r);
}
