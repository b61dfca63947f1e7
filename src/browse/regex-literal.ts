// The longest literal every match of a regex must contain, found conservatively, so the JS engine
// can skip (with a byte search) the files that cannot match without decoding them.

const META = new Set([..."\\.^$*+?()[]{}|"]);
const ESCAPED_LITERALS = new Set([..."\\.^$*+?()[]{}|/-_:=!<>#&~,'\"@%` "]);

/** A required literal of at least 3 characters, or undefined when none is certain. */
export function requiredLiteral(source: string): string | undefined {
  if (source.includes("|")) return undefined; // an alternative could avoid any one literal
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run.length > 0) runs.push(run);
    run = "";
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      const e = source[i + 1];
      i++;
      if (e !== undefined && ESCAPED_LITERALS.has(e)) run += e;
      else end(); // \d, \w, \b, \n, \u{...}: not a plain character
      continue;
    }
    if (c === "*" || c === "?" || c === "{") {
      run = run.slice(0, -1); // the previous character may be absent
      end();
      if (c === "{") while (i < source.length && source[i] !== "}") i++;
      continue;
    }
    if (c === "+") {
      end();
      continue;
    }
    if (c === "[") {
      end();
      i++;
      if (source[i] === "]") i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
      continue;
    }
    if (c === "(") {
      // A group may be optional or repeated: skip it whole.
      end();
      let depth = 1;
      while (++i < source.length && depth > 0) {
        if (source[i] === "\\") i++;
        else if (source[i] === "(") depth++;
        else if (source[i] === ")") depth--;
      }
      i--;
      // A quantifier after the group only affects the group, already skipped.
      continue;
    }
    if (META.has(c)) {
      end();
      continue;
    }
    run += c;
  }
  end();
  const best = runs.sort((a, b) => b.length - a.length)[0];
  return best !== undefined && best.length >= 3 ? best : undefined;
}
