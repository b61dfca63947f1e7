// What a call's network grant matches, apart from the proxy itself (filter.ts): the host decides a
// call's wish against the grants at every contained call, and only a call granted network loads the
// proxy, with node:http and node:dns (issue 32: a start that serves none loads neither).

/** A name granted by `pattern`: the name itself, or any name under `*.suffix`. */
export function domainMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase();
  if (p.startsWith("*.")) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return p === h;
}
