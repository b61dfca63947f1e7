// The `latch mcp` servers and fixtures a test file starts, each killed or removed after the file: a
// test that fails midway leaves no server running (one would keep the file from ever ending).
import { after } from "node:test";
import { makeFixture, type Fixture } from "./fixture.js";
import { RawStdio } from "./raw-stdio.js";

export function fileScope(): {
  fixture: (prefix: string) => Fixture;
  serve: (args: string[], env?: Record<string, string>, cwd?: string, cli?: string) => RawStdio;
} {
  const fixtures: Fixture[] = [];
  const servers: RawStdio[] = [];
  after(() => {
    for (const s of servers) s.child.kill("SIGKILL");
    fixtures.forEach((f) => f.cleanup());
  });
  return {
    fixture: (prefix) => {
      const fx = makeFixture(prefix);
      fixtures.push(fx);
      return fx;
    },
    serve: (args, env = {}, cwd, cli) => {
      const s = new RawStdio(args, env, cwd, cli);
      servers.push(s);
      return s;
    },
  };
}
