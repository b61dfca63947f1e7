// The command-line table: each line with its verdict under one policy — the planned steps (argv per
// step, and where it matters every command that would run), or the refusal, matched on its reason.
import assert from "node:assert/strict";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { Refusal } from "../../src/errors.js";
import { makeShellFixture } from "./shell-fixture.js";
import { shq } from "../helpers/quote.js";

const fx = makeShellFixture();
after(() => fx.cleanup());

const POLICY = {
  _allowed_commands:
    "ls,cat,echo,git,npm,grep,find,env,xargs,nice,nohup,timeout,stdbuf,setsid,time,flock,sh,bash,dash,zsh,make,node,true,false,mkdir,touch,head,wc,sudo,doas,su,strace,watch",
  _denied_commands: "rm,iptables,dd",
};

type Verdict = { steps: string[][]; commands?: string[][] } | RegExp;
const rows: [string, Verdict][] = [];
const ok = (line: string, steps: string[][], commands?: string[][]) => rows.push([line, { steps, commands }]);
const no = (line: string, reason: RegExp) => rows.push([line, reason]);

// Plain commands and quoting
ok("ls", [["ls"]]);
ok("ls -la src", [["ls", "-la", "src"]]);
ok("echo 'a b'", [["echo", "a b"]]);
ok('echo "a b"', [["echo", "a b"]]);
ok(`echo "it's"`, [["echo", "it's"]]);
ok("echo a'b'\"c\"", [["echo", "abc"]]);
ok("echo ''", [["echo", ""]]);
ok("git log --oneline -n 5", [["git", "log", "--oneline", "-n", "5"]]);
ok("find . -name '*.ts'", [["find", ".", "-name", "*.ts"]]);
ok('find . -name "*.ts"', [["find", ".", "-name", "*.ts"]]);
ok("grep -rn 'a b' src", [["grep", "-rn", "a b", "src"]]);
ok("echo '$HOME' '`x`' '\\n'", [["echo", "$HOME", "`x`", "\\n"]]);
ok("git diff HEAD~1", [["git", "diff", "HEAD~1"]]);
ok("git stash show stash@{0}", [["git", "stash", "show", "stash@{0}"]]);
ok("echo a=b", [["echo", "a=b"]]);
ok("echo !", [["echo", "!"]]);
ok("echo 100%", [["echo", "100%"]]);
ok("echo\ta\tb", [["echo", "a", "b"]]);
ok("  ls  ", [["ls"]]);
ok(shq(`${fx.bin}/ls`), [[`${fx.bin}/ls`]]);
no(shq(`${fx.bin}/ls-link`), /not on the allowlist/); // allowed by the name it is allowed under, not by a link's

// Sequences
ok("true && ls", [["true"], ["ls"]]);
ok("false || ls", [["false"], ["ls"]]);
ok("ls; cat a.txt", [["ls"], ["cat", "a.txt"]]);
ok("ls\ncat a.txt", [["ls"], ["cat", "a.txt"]]);
ok("ls\n\n\ncat a.txt\n", [["ls"], ["cat", "a.txt"]]);
ok("ls;", [["ls"]]);
ok("true && false || echo x", [["true"], ["false"], ["echo", "x"]]);
ok("ls && ls && ls && ls", [["ls"], ["ls"], ["ls"], ["ls"]]);
no("; ls", /does not parse/);
no("ls && ", /does not parse/);
no("ls ;; ls", /does not parse/);

// cd
ok("cd src && ls", [["cd", "src"], ["ls"]]);
ok("cd src; cd; ls", [["cd", "src"], ["cd"], ["ls"]]);
ok("cd sub; cd ..; ls", [["cd", "sub"], ["cd", ".."], ["ls"]]);
ok("cd not-yet && ls", [["cd", "not-yet"], ["ls"]]);
no("cd ..", /outside the workspace/);
no("cd /", /outside the workspace/);
no("cd /tmp && ls", /outside the workspace/);
no("cd src/../..", /outside the workspace/);
no("cd -", /cd takes exactly one folder/);
no("cd -P src", /cd takes exactly one folder/);
no("cd src sub", /cd takes exactly one folder/);
no("true && cd src", /`cd` after && or \|\|/);
no("cd a.txt", /not a folder/);

// Refused constructs: pipes, redirections, heredocs, here-strings
no("ls | cat", /a pipe/);
no("ls|cat", /a pipe/);
no("ls && ls | cat", /a pipe/);
no("ls > out.txt", /a redirection/);
no("ls >> out.txt", /a redirection/);
no("cat < a.txt", /a redirection/);
no("ls 2>&1", /a redirection/);
no("ls >| out.txt", /a redirection/);
no("cat <> a.txt", /a redirection/);
no("> out.txt", /a redirection/);
no("cat <<EOF\nhi\nEOF", /a heredoc/);
no("cat <<-EOF\nhi\nEOF", /a heredoc/);
no("cat <<< hi", /a here-string \(<<<\), which is not POSIX sh/);
no("ls &> out", /a background job|a redirection/);
no("ls |& cat", /a pipe \(\|&\)/);
no("a=(1 2)", /an array/);
// Globs
no("ls *.go", /unquoted glob/);
no("ls src/*.ts", /unquoted glob/);
no("ls a?.txt", /unquoted glob/);
no("ls [ab].txt", /unquoted glob/);
no("ls 'src'/*", /unquoted glob/);
// Variables, substitutions, arithmetic
no("echo $HOME", /a variable expansion/);
no("echo ${HOME}", /a variable expansion/);
no('echo "$HOME"', /a variable expansion/);
no("echo $1", /a variable expansion/);
no("echo $(ls)", /a command substitution/);
no('echo "$(ls)"', /a command substitution/);
no("echo `ls`", /command substitution/);
no('echo "`ls`"', /command substitution/);
no("echo $((1+2))", /arithmetic expansion/);
no("echo a$", /a `\$` expansion/);
no('echo "cost: $"', /a `\$` expansion/);
no("$(echo rm) a.txt", /a command substitution/);
// Escapes
no("\\rm a.txt", /a backslash escape/);
no("echo a\\ b", /a backslash escape/);
no('echo "a\\"b"', /a backslash escape/);
no("echo $'\\x72m'", /a `\$` expansion|escape string/);
no('echo $"x"', /a `\$` expansion|locale string/);
no("ls \\\n-la", /line continuation/);
no("echo 'a\\\nb'", /line continuation/);
// & ! and VAR=x
no("ls &", /a background job/);
no("ls & cat a.txt", /a background job/);
no("! ls", /negation/);
no("X=1 ls", /variable assignment/);
no("X=1", /variable assignment/);
no("PATH=. ls", /variable assignment/);
// Compound constructs
no("if true; then ls; fi", /an if statement/);
no("for f in a b; do ls; done", /a for loop/);
no("while true; do ls; done", /while\/until loop/);
no("until false; do ls; done", /while\/until loop/);
no("case x in x) ls;; esac", /a case statement/);
no("(ls)", /subshell/);
no("((ls))", /subshell/);
no("{ ls; }", /\{ \} group/);
no("f() { ls; }", /function definition/);
no("ls && (rm a.txt)", /subshell/);
// ~, brace expansion, process substitution
no("ls ~", /home-folder expansion/);
no("cat ~/.ssh/id_rsa", /home-folder expansion/);
no("make KEY=~/.ssh/id_rsa", /home-folder expansion/);
no("echo a:~/x", /home-folder expansion/);
ok("echo '~' a~b", [["echo", "~", "a~b"]]);
no("echo {a,b}", /brace expansion/);
no("echo x{1..3}", /brace expansion/);
no("cat <(ls)", /a process substitution/);
no("diff <(ls) <(ls src)", /a process substitution/);
no("ls >(cat)", /a process substitution/);
no("echo =ls", /leading `=`/);

// Bypasses of the allowlist and the denylist
no("rm a.txt", /denied/);
no("r''m a.txt", /denied/);
no('"rm" a.txt', /denied/);
no("'rm' a.txt", /denied/);
no('r""m a.txt', /denied/);
no(`${shq(`${fx.bin}/rm`)} a.txt`, /denied/);
no(`${shq(`${fx.bin}/../bin/rm`)} a.txt`, /denied/);
no(`${shq(`${fx.sbin}/iptables`)} -F`, /denied/);
no("iptables -F", /denied/);
no("./ls", /denied/); // a symlink named ls that is rm
no("python3 -c 1", /not on the allowlist/);
no("sed -i s/a/b/ a.txt", /not on the allowlist/);
no("nosuchprogram", /not found/);
no("./script.sh", /not found/); // not executable
no(shq(`${fx.bin}/not-executable`), /not found/);
no("ls && rm a.txt", /denied/);
no("ls; rm a.txt", /denied/);
no("ls\nrm a.txt", /denied/);
no("ls # comment\nrm a.txt", /denied/);
// Wrappers: env, xargs, nice, nohup, timeout, stdbuf, setsid, time, flock
ok("env ls", [["env", "ls"]], [["env", "ls"], ["ls"]]);
ok("env", [["env"]], [["env"]]);
ok(
  "env -i ls -la",
  [["env", "-i", "ls", "-la"]],
  [
    ["env", "-i", "ls", "-la"],
    ["ls", "-la"],
  ],
);
ok("env -u HOME -- ls", [["env", "-u", "HOME", "--", "ls"]], [["env", "-u", "HOME", "--", "ls"], ["ls"]]);
no("env rm a.txt", /denied/);
no("env -i rm a.txt", /denied/);
no("env X=1 ls", /setting variables/);
no("env LD_PRELOAD=/x.so ls", /setting variables|outside the workspace/);
no("env -S 'rm a.txt'", /splits a string/);
no("env --split-string='rm a.txt'", /splits a string/);
no("env --sp='rm a.txt'", /splits a string/);
no("env -C sub rm", /changes the folder/);
no("env --bogus ls", /does not know/);
ok("xargs ls", [["xargs", "ls"]], [["xargs", "ls"], ["ls"]]);
ok("xargs", [["xargs"]], [["xargs"], ["echo"]]);
ok(
  "xargs -0 -n 1 grep x",
  [["xargs", "-0", "-n", "1", "grep", "x"]],
  [
    ["xargs", "-0", "-n", "1", "grep", "x"],
    ["grep", "x"],
  ],
);
no("xargs rm", /denied/);
no("xargs -0 rm", /denied/);
no("xargs -I '{}' rm '{}'", /denied/);
no("xargs --max-args=1 rm", /denied/);
no("xargs --frobnicate ls", /does not know/);
no("xargs -a list.txt cat", /from a file/);
no("xargs --arg-file=list.txt cat", /from a file/);
ok("nice ls", [["nice", "ls"]], [["nice", "ls"], ["ls"]]);
ok("nice -n 5 ls", [["nice", "-n", "5", "ls"]], [["nice", "-n", "5", "ls"], ["ls"]]);
no("nice rm a.txt", /denied/);
no("nice -n 5 rm a.txt", /denied/);
no("nice -5 rm a.txt", /denied/);
no("nohup rm a.txt", /denied/);
ok("timeout 5 ls", [["timeout", "5", "ls"]], [["timeout", "5", "ls"], ["ls"]]);
no("timeout 5 rm a.txt", /denied/);
no("timeout -s KILL 5 rm a.txt", /denied/);
no("timeout --kill-after=1 5 rm a.txt", /denied/);
no("stdbuf -o0 rm a.txt", /denied/);
no("stdbuf -o 0 rm a.txt", /denied/);
no("setsid rm a.txt", /denied/);
no("setsid -f rm a.txt", /denied/);
no("time rm a.txt", /denied/);
no("time -p rm a.txt", /denied/);
ok("flock lock ls", [["flock", "lock", "ls"]], [["flock", "lock", "ls"], ["ls"]]);
no("flock lock rm a.txt", /denied/);
no("flock -n lock rm a.txt", /denied/);
no("flock lock -c 'rm a.txt'", /denied/);
no("flock lock -c 'ls | cat'", /a pipe/);
no("nice env timeout 1 nohup rm a.txt", /denied/);
no("env python3", /not on the allowlist/);
// sh -c, recursively
ok(
  "sh -c 'ls && cat a.txt'",
  [["sh", "-c", "ls && cat a.txt"]],
  [["sh", "-c", "ls && cat a.txt"], ["ls"], ["cat", "a.txt"]],
);
ok(`bash -c "sh -c 'ls'"`, [["bash", "-c", "sh -c 'ls'"]], [["bash", "-c", "sh -c 'ls'"], ["sh", "-c", "ls"], ["ls"]]);
ok("sh -ec 'ls' name arg", [["sh", "-ec", "ls", "name", "arg"]], [["sh", "-ec", "ls", "name", "arg"], ["ls"]]);
no("sh -c 'rm a.txt'", /denied/);
no("bash -c 'rm a.txt'", /denied/);
no('dash -c "rm a.txt"', /denied/);
no("zsh -c 'rm a.txt'", /denied/);
no("sh -c 'ls; rm a.txt'", /denied/);
no(`sh -c "bash -c 'rm a.txt'"`, /denied/);
no("sh -c 'ls | cat'", /a pipe/);
no("sh -c 'echo $HOME'", /a variable expansion/);
no("sh -c 'cd / && ls'", /outside the workspace/);
no("sh -c 'exec rm a.txt'", /does not check|not found/);
no("sh -c 'eval ls'", /does not check|not found/);
no("sh script.sh", /without -c runs a script file/);
no("bash", /without -c/);
no("sh -i", /shell option latch does not model/);
no("bash --rcfile x -c ls", /shell option|without -c/);
no("sh -c", /missing its script/);
no(`sh -c "echo 'x"`, /does not parse/);
// find -exec/-execdir/-ok/-okdir
ok(
  "find . -exec ls '{}' ';'",
  [["find", ".", "-exec", "ls", "{}", ";"]],
  [
    ["find", ".", "-exec", "ls", "{}", ";"],
    ["ls", "{}"],
  ],
);
ok("find . -name '*.o' -exec ls '{}' +", [["find", ".", "-name", "*.o", "-exec", "ls", "{}", "+"]]);
no("find . -exec rm '{}' ';'", /denied/);
no("find . -execdir rm '{}' +", /denied/);
no("find . -ok rm '{}' ';'", /denied/);
no("find . -okdir rm '{}' ';'", /denied/);
no("find . -exec ls '{}' ';' -exec rm '{}' ';'", /denied/);
no("find . -exec '{}' ';'", /comes from the found file names/);
no("find . -exec ls", /no terminating/);
no("find . -exec ls '{}' \\;", /backslash escape/);
no("find . -execdir ./x ';'", /relative path/);
no("find / -name x", /outside the workspace/);
// git -c keys that run commands
ok("git -c user.name=x log", [["git", "-c", "user.name=x", "log"]]);
no("git -c core.pager=rm log", /runs as a command/);
no("git -c pager.log=rm log", /runs as a command/);
no("git -c core.editor=rm commit", /runs as a command/);
no("git -c core.sshCommand=rm fetch", /runs as a command/);
no("git -c 'alias.x=!rm a.txt' x", /runs as a command/);
no("git -c core.hooksPath=h commit", /runs as a command/);
no("git -c core.fsmonitor=x status", /runs as a command/);
no("git -c CORE.PAGER=rm log", /runs as a command/);
no("git config --global core.pager rm", /sets a config key whose value git runs as a command/);
// The local form plans: the envelope refuses it (gitConfigGate, test/sandbox/git-config-approval.test.ts).
no("git --config-env=core.pager=X log", /config-env/);
no("git --exec-path=. status", /exec-path/);
no("git fetch --upload-pack=rm origin", /runs the program given to `--upload-pack`/);
no("git rebase -x rm main", /rebase -x/);
no("git bisect run rm", /bisect run/);
no("git submodule foreach rm", /foreach/);
no("git -C /tmp status", /outside the workspace/);
// sudo, doas, su (allowlisted above, and refused all the same), and unmodelled runners
no("sudo ls", /another user/);
no("doas ls", /another user/);
no("su -c ls", /another user/);
no("env sudo ls", /another user/);
no("strace ls", /does not check/);
no("watch ls", /does not check/);
// Arguments: absolute paths and .. outside the root; credential paths
ok("cat src/../a.txt", [["cat", "src/../a.txt"]]);
ok(`cat ${shq(`${fx.root}/a.txt`)}`, [["cat", `${fx.root}/a.txt`]]);
ok("git log a..b", [["git", "log", "a..b"]]);
no("cat /etc/passwd", /outside the workspace/);
no("cat ../x", /outside the workspace/);
no("cat src/../../x", /outside the workspace/);
no("ls /", /outside the workspace/);
no("grep -r x --include=/etc/x .", /outside the workspace/);
no("ls -I/etc", /outside the workspace/);
no("git --git-dir=/etc log", /outside the workspace/);
no("cat .env", /credential path/);
ok("cat .env.example", [["cat", ".env.example"]]);
no("cat id_rsa", /credential path/);
no("cat key.pem", /credential path/);
no("ls .ssh", /credential path/);
no("cat sub/../.env", /credential path/);
no("find . -exec cat .env ';'", /credential path/);
// Control characters
no("ls\r", /control or invisible character \(U\+000D\)/);
no("ls -la\r\nrm a.txt", /U\+000D/);
no("ls\u0000", /U\+0000/);
no("echo \u001b[31mred", /U\+001B/);
no("ls\u000b-la", /U\+000B/);
no("ls\u000c", /U\+000C/);
no("ls\u007f", /U\+007F/);
no("ls\u0085", /U\+0085/);
no("ls\u2028rm a.txt", /U\+2028/);
no("l\u200bs", /U\+200B/);
no("ls \u202etxt.exe", /U\+202E/);
no("\ufeffls", /U\+FEFF/);
no("ls\u00ad", /U\+00AD/);
no("ls \u{E0041}", /U\+E0041/); // a tag character: invisible, but a model reads it
no("ls\u3164", /U\+3164/);
// Unicode look-alikes of command names
no("ｌｓ", /outside printable ASCII/);
no("\u0455udo ls", /outside printable ASCII/); // Cyrillic dze
no("r\u043c a.txt", /outside printable ASCII/); // Cyrillic em
no("g\u03bft status", /outside printable ASCII/); // Greek omicron
no("ls\u00a0-la", /outside printable ASCII/); // no-break space: one word
// Comments
ok("ls # rm -rf /", [["ls"]]);
ok("# only a comment", []);
ok("echo a#b", [["echo", "a#b"]]);
ok("ls\n# rm a.txt\ncat a.txt", [["ls"], ["cat", "a.txt"]]);
// Unterminated quotes and incomplete lines
no("echo 'x", /does not parse.*quote/);
no('echo "x', /does not parse.*quote/);
no("echo $(ls", /does not parse/);
no("ls &&", /does not parse/);
no("echo `ls", /does not parse/);
// Lines of 100 KB
ok(`echo '${"a".repeat(100 * 1024)}'`, [["echo", "a".repeat(100 * 1024)]]);
const word99 = "abcdefghi".repeat(11);
ok(`echo ${`${word99} `.repeat(1000)}`, [["echo", ...Array(1000).fill(word99)]]); // 100 KB in 1001 words
no(`echo ${`${word99} `.repeat(1000)}| cat`, /a pipe/);
no(`echo ${"ab ".repeat(34 * 1024)}`, /more than 1024 words/);
no(`echo '${"a".repeat(100 * 1024)}`, /does not parse/);
no(`echo ${"a".repeat(2 * 1024 * 1024)}`, /over 1048576 bytes/);

describe("command-line verdicts under a policy", () => {
  test(`the table has at least 150 lines (it has ${rows.length})`, () => {
    assert.ok(rows.length >= 150);
  });
  for (const [line, verdict] of rows) {
    const name = JSON.stringify(line.length > 70 ? line.slice(0, 60) + `… (${line.length} chars)` : line);
    test(name, async () => {
      if (verdict instanceof RegExp) {
        await assert.rejects(fx.plan(line, POLICY), (err: unknown) => {
          assert.ok(err instanceof Refusal, `expected a Refusal, got ${String(err)}`);
          assert.match(err.reason, verdict);
          if (/which latch's shell does not run/.test(err.reason)) assert.match(err.hint ?? "", /its own call/);
          return true;
        });
      } else {
        const plan = await fx.plan(line, POLICY);
        assert.deepEqual(
          plan.steps.map((s) => s.argv),
          verdict.steps,
        );
        if (verdict.commands) assert.deepEqual(plan.commands, verdict.commands);
        for (const s of plan.steps)
          assert.ok(s.program === "cd" || s.program.startsWith("/"), `program ${s.program} is resolved`);
      }
    });
  }
});

describe("allowlist, denylist and _allowed_paths details", () => {
  const reason = async (line: string, settings: Record<string, string>) => {
    try {
      await fx.plan(line, settings);
      return "allowed";
    } catch (err) {
      if (err instanceof Refusal) return err.reason;
      throw err;
    }
  };
  test("the allowlist compares canonical paths: ./ls (a link to rm) is not the allowlisted ls", async () => {
    const only = { _allowed_commands: "ls" };
    assert.equal(await reason("ls", only), "allowed");
    assert.equal(await reason(shq(`${fx.bin}/ls`), only), "allowed");
    assert.match(await reason("./ls", only), /not on the allowlist/);
    assert.match(await reason(shq(`${fx.bin}/../bin/rm`), only), /not on the allowlist/);
    assert.equal(await reason(shq(`${fx.bin}/ls`), { _allowed_commands: `${fx.bin}/ls` }), "allowed");
  });
  test("a program installed on PATH after a plan is seen by the next plan; one removed is refused again", async () => {
    const only = { _allowed_commands: "newtool" };
    const tool = path.join(fx.sbin, "newtool");
    assert.notEqual(await reason("newtool", only), "allowed"); // not there yet: resolved once, and kept
    writeFileSync(tool, "#!/bin/sh\nexit 0\n");
    chmodSync(tool, 0o755);
    assert.equal(
      await reason("newtool", only),
      "allowed",
      "the PATH folder changed, so the kept entries were resolved again",
    );
    rmSync(tool);
    assert.notEqual(await reason("newtool", only), "allowed");
  });
  test("entries are resolved by each plan that reads them: a chmod between two plans is seen", async () => {
    const only = { _allowed_commands: "ls,chtool" };
    const tool = path.join(fx.sbin, "chtool");
    writeFileSync(tool, "#!/bin/sh\nexit 0\n");
    chmodSync(tool, 0o755);
    assert.equal(await reason("chtool", only), "allowed");
    chmodSync(tool, 0o644); // the folder's mtime does not change: only the entry's own resolution sees it
    assert.match(await reason(shq(tool), only), /not on the allowlist|not found/);
    chmodSync(tool, 0o755);
    assert.equal(await reason(shq(tool), only), "allowed");
    rmSync(tool);
  });
  test("the denylist always wins, by name, basename or resolved path", async () => {
    assert.match(await reason("ls", { _allowed_commands: "ls", _denied_commands: "ls" }), /denied/);
    assert.match(await reason(shq(`${fx.bin}/ls`), { _denied_commands: "ls" }), /denied/);
    assert.match(await reason("ls-link", { _denied_commands: `${fx.bin}/ls` }), /denied/);
    assert.match(await reason("./ls", { _denied_commands: "rm" }), /denied/);
  });
  test("_allowed_paths opens named paths outside the root; credential paths stay closed", async () => {
    assert.match(await reason(`cat ${shq(`${fx.bin}/ls`)}`, { _allowed_commands: "cat" }), /outside the workspace/);
    assert.equal(
      await reason(`cat ${shq(`${fx.bin}/ls`)}`, { _allowed_commands: "cat", _allowed_paths: fx.bin }),
      "allowed",
    );
    assert.match(
      await reason(`cat ${shq(`${fx.base}/x/.ssh/id_rsa`)}`, { _allowed_commands: "cat", _allowed_paths: fx.base }),
      /credential path/,
    );
  });
  test("sh -c scripts are checked recursively, four levels deep", async () => {
    const plan = await fx.plan({ command: "sh", args: ["-c", `sh -c "sh -c 'sh -c ls'"`] }, POLICY);
    assert.deepEqual(
      plan.commands.map((c) => c[0]),
      ["sh", "sh", "sh", "sh", "ls"],
    );
    await assert.rejects(fx.plan({ command: "sh", args: ["-c", `sh -c "sh -c 'sh -c rm'"`] }, POLICY), /denied/);
  });
  test("no policy: wrappers are still unwrapped into commands, and what cannot be seen is noted", async () => {
    const plan = await fx.plan("env rm a.txt; sh script.sh", {});
    assert.deepEqual(plan.commands, [
      ["env", "rm", "a.txt"],
      ["rm", "a.txt"],
      ["sh", "script.sh"],
    ]);
    assert.equal(plan.policy, false);
    assert.match(plan.opaque.join(" "), /without -c runs a script file/);
    const raw = await fx.plan({ command: "ls | wc -l", shell: true }, {});
    assert.equal(raw.raw, "ls | wc -l");
    assert.deepEqual(
      raw.steps.map((s) => ({ argv: s.argv, cwd: s.cwd, program: s.program })),
      [{ argv: ["/bin/sh", "-c", "ls | wc -l"], cwd: fx.root, program: "/bin/sh" }],
    );
    assert.equal(raw.steps[0].capabilities.executesCode, true);
    const bare = await fx.plan("no-such-program x", {});
    assert.equal(bare.steps[0].program, "no-such-program");
  });
});
