// Odd file names through the built `latch mcp` over real stdio: what the model reads (list_dir,
// find_files, grep with either engine) shows each name one way, and that form, sent back as a path,
// reads and writes the file with those bytes (checked on the disk).
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, stdioClient, type ToolResult } from "../helpers/mcp.js";
import { bytes, ODD_NAMES } from "../helpers/odd-names.js";

const ODD = ODD_NAMES;

describe("odd names over `latch mcp` stdio", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  const at = (b: Buffer) => Buffer.concat([Buffer.from(fx.root + "/"), b]);
  const shownNames = ODD.map(([, s]) => s).sort();

  test("list_dir, find_files and grep (rg and js) show each name the same way; the shown form reads and writes it", async () => {
    for (const [b] of ODD) writeFileSync(at(b), `needle in ${b.toString("hex")}\n`);
    mkdirSync(at(bytes(".ssh")));
    writeFileSync(at(bytes(".ssh/id\n", [0xff])), "needle SECRET\n");
    writeFileSync(at(bytes(".env.", [0xff])), "needle SECRET\n");
    for (const engine of ["rg", "js"]) {
      const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--yes"], undefined, {
        LATCH_GREP_ENGINE: engine,
      });
      try {
        const call = async (name: string, args: Record<string, unknown>) => {
          const r = (await client.callTool({ name, arguments: args })) as ToolResult;
          assert.equal(r.isError, undefined, `${engine} ${name}: ${JSON.stringify(r)}`);
          return fieldsOf(r);
        };
        const ls = await call("list_dir", { path: "." });
        assert.deepEqual(String(ls.entries).trimEnd().split("\n").sort(), shownNames, engine);
        assert.equal(ls.hidden, 2, engine);
        const found = await call("find_files", { pattern: "*" });
        assert.deepEqual([...found.matches].sort(), shownNames, engine);
        const g = await call("grep", { pattern: "needle" });
        const greppedNames = String(g.results)
          .trimEnd()
          .split("\n")
          .map((l) => l.slice(0, l.indexOf(":1: ")));
        assert.deepEqual(greppedNames.sort(), shownNames, engine);
        assert.equal(g.hidden, 2, engine);
        for (const [b, shown] of ODD) {
          const r = await call("read_file", { path: shown, force: true });
          assert.equal(
            r.content ?? r.text,
            `needle in ${b.toString("hex")}\n`,
            `${engine} ${shown}: ${JSON.stringify(r)}`,
          );
          await call("edit_file", { path: shown, old_string: "needle in", new_string: `needle (${engine}) in` });
          assert.equal(readFileSync(at(b), "utf8"), `needle (${engine}) in ${b.toString("hex")}\n`);
          await call("write_file", { path: shown, content: `needle in ${b.toString("hex")}\n` });
          assert.equal(readFileSync(at(b), "utf8"), `needle in ${b.toString("hex")}\n`);
        }
        assert.equal(
          readdirSync(fx.root, { encoding: "buffer" }).length,
          ODD.length + 2,
          "no file made by a shown name",
        );
      } finally {
        await client.close();
      }
    }
  });
});
