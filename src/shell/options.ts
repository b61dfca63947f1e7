// A small getopt: skip a program's options to find where its operands (often the command it runs)
// begin. Options it does not know are refused rather than guessed at, since a wrong guess would
// move the start of the inner command.

export interface OptionSpec {
  /** Short options without a value. */
  flags?: string;
  /** Short options that take a value (attached, or the next word). */
  withValue?: string;
  /** Short options whose value is optional and must be attached. */
  optionalValue?: string;
  long?: string[];
  longWithValue?: string[];
  /** Options latch refuses outright, short (one letter) or long, with why. */
  refuse?: Record<string, string>;
  /** `-10` style numbers (nice). */
  numbers?: boolean;
}

export type OptionScan = { ok: true; index: number; seen: Map<string, string | true> } | { ok: false; reason: string };

/** Scan options from args[0]; stop at `--`, `-` or the first operand (no permutation, like `+` getopt). */
export function scanOptions(program: string, args: readonly string[], spec: OptionSpec): OptionScan {
  const seen = new Map<string, string | true>();
  let i = 0;
  while (i < args.length) {
    const a = args[i];
    if (a === "--") return { ok: true, index: i + 1, seen };
    if (a === "-" || !a.startsWith("-")) break;
    if (spec.numbers && /^-[0-9]+$/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith("--")) {
      const [typed, ...rest] = a.slice(2).split("=");
      const name = longName(typed, spec);
      if (name === undefined)
        return { ok: false, reason: `\`${program}\` is given the option \`--${typed}\`, which latch does not know` };
      if (spec.refuse?.[name]) return { ok: false, reason: `\`${program} --${name}\` ${spec.refuse[name]}` };
      if (spec.longWithValue?.includes(name)) {
        if (rest.length > 0) {
          seen.set(name, rest.join("="));
          i++;
        } else {
          if (i + 1 >= args.length) return { ok: false, reason: `\`${program} --${name}\` needs a value` };
          seen.set(name, args[i + 1]);
          i += 2;
        }
        continue;
      }
      if (rest.length > 0) return { ok: false, reason: `\`${program} --${name}\` takes no value` };
      seen.set(name, true);
      i++;
      continue;
    }
    let next = i + 1;
    for (let j = 1; j < a.length; j++) {
      const c = a[j];
      if (spec.refuse?.[c]) return { ok: false, reason: `\`${program} -${c}\` ${spec.refuse[c]}` };
      if (spec.flags?.includes(c)) {
        seen.set(c, true);
        continue;
      }
      if (spec.withValue?.includes(c)) {
        if (j + 1 < a.length) seen.set(c, a.slice(j + 1));
        else {
          if (i + 1 >= args.length) return { ok: false, reason: `\`${program} -${c}\` needs a value` };
          seen.set(c, args[i + 1]);
          next = i + 2;
        }
        break;
      }
      if (spec.optionalValue?.includes(c)) {
        seen.set(c, a.slice(j + 1) || true);
        break;
      }
      return { ok: false, reason: `\`${program}\` is given the option \`-${c}\`, which latch does not know` };
    }
    i = next;
  }
  return { ok: true, index: i, seen };
}

/** GNU getopt accepts any unambiguous prefix of a long option; so must we, or `--sp` slips past. */
function longName(typed: string, spec: OptionSpec): string | undefined {
  const all = [
    ...(spec.long ?? []),
    ...(spec.longWithValue ?? []),
    ...Object.keys(spec.refuse ?? {}).filter((k) => k.length > 1),
  ];
  if (all.includes(typed)) return typed;
  const matches = all.filter((n) => n.startsWith(typed));
  return typed !== "" && matches.length === 1 ? matches[0] : undefined;
}
