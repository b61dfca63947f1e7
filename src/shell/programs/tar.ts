// GNU tar (and bsdtar's common forms): options that run programs, the modes that write, and the old
// bundled first argument (`tar xzf a.tgz`). getopt_long accepts unique prefixes of long options.
import type { ParsedArgs, ProgramTable } from "./types.js";

/** tar's first word may be a bundle of letters without a dash (`tar czf out.tgz src`). */
function hasMode(p: ParsedArgs, argv: readonly string[], letters: RegExp, long: string[]): boolean {
  const bundle = argv[0] !== undefined && !argv[0].startsWith("-") ? argv[0] : "";
  if (letters.test(bundle)) return true;
  return p.options.some(
    (o) =>
      (o.name.length === 2 && letters.test(o.name[1])) || long.some((l) => o.name.length >= 4 && l.startsWith(o.name)),
  );
}

export const tar: ProgramTable = {
  names: ["tar", "gtar", "bsdtar"],
  grammar: {
    abbrev: true,
    shortValue: "fCIFLgKNTVXb",
    longValue: [
      "file",
      "directory",
      "use-compress-program",
      "to-command",
      "rsh-command",
      "info-script",
      "new-volume-script",
      "checkpoint-action",
      "files-from",
      "exclude-from",
      "listed-incremental",
      "owner",
      "group",
      "mode",
      "transform",
      "xform",
      "exclude",
      "label",
      "newer",
      "after-date",
      "strip-components",
      "format",
      "blocking-factor",
    ],
  },
  rules: [
    {
      effect: "exec",
      why: "runs the program named by `-I` / `--use-compress-program` / `--to-command` / `--rsh-command` / `--info-script`",
      options: [
        "-I",
        "-F",
        "--use-compress-program",
        "--to-command",
        "--rsh-command",
        "--info-script",
        "--new-volume-script",
      ],
      match: [
        "tar -I 'sh -c x' -xf a.tar",
        "tar --use-comp=x -cf a.tar src",
        "tar -xf a.tar --to-command=sh",
        "tar --rsh-command=/bin/sh -xf h:a",
        "tar -F x -cf a.tar .",
        "tar --info-script=x -cf a.tar .",
      ],
      not_match: ["tar -xzf a.tgz -C build", "tar -czf a.tgz src"],
    },
    {
      effect: "exec",
      why: "runs a command at checkpoints (`--checkpoint-action=exec=…`)",
      when: (p) =>
        p.options.some(
          (o) => o.name.length >= 8 && "--checkpoint-action".startsWith(o.name) && /(^|,)\s*exec/.test(o.value ?? ""),
        ),
      match: ["tar --checkpoint=1 --checkpoint-action=exec=sh -cf a.tar .", "tar --checkpoint-act=exec=x -xf a.tar"],
      not_match: ["tar --checkpoint=1 --checkpoint-action=dot -cf a.tar ."],
    },
    {
      effect: "exec",
      why: "an archive named `host:path` is opened through a remote shell",
      when: (p, argv) => {
        const files = p.options
          .filter((o) => o.name === "-f" || (o.name.length >= 4 && "--file".startsWith(o.name)))
          .map((o) => o.value ?? "");
        if (argv[0] !== undefined && !argv[0].startsWith("-") && argv[0].includes("f")) files.push(p.operands[1] ?? "");
        const local = p.options.some((o) => o.name.startsWith("--force-l"));
        return !local && files.some((f) => /^[^/]*:/.test(f));
      },
      match: ["tar -xf host:a.tar", "tar xf user@host:a.tar"],
      not_match: ["tar -xf a.tar", "tar --force-local -xf c:a.tar"],
    },
    {
      effect: "write",
      why: "extracts, creates or changes an archive (writes files)",
      when: (p, argv) =>
        hasMode(p, argv, /[xcruA]/, [
          "--extract",
          "--get",
          "--create",
          "--append",
          "--update",
          "--catenate",
          "--concatenate",
          "--delete",
          "--remove-files",
        ]),
      match: [
        "tar -xzf a.tgz -C build",
        "tar xzf a.tgz",
        "tar -czf a.tgz src",
        "tar --extract -f a.tar",
        "tar -cvf/tmp/x src",
      ],
      not_match: ["tar -tzf a.tgz", "tar tf a.tar", "tar --list -f a.tar"],
    },
  ],
};
