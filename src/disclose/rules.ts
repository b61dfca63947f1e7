// The secret formats the disclosure gate looks for (issue 29), as data: an id (the gitleaks rule id
// where gitleaks has one, so findings read the same in both tools), the keywords (case-sensitive, as
// the tokens are issued) one of which must occur before the pattern runs (gitleaks' prefilter: most
// text holds none, so most text costs one indexOf per keyword), and the pattern in JavaScript syntax,
// led by a literal where it can be (V8 then searches for the literal first). `boundary`: the match
// must not follow a word character (checked by the scanner: a leading \b would hide the literal). `group` redacts only that
// capture (a connection string keeps its scheme, user and host). Every pattern is linear: one repeat
// per part, bounded where it could meet a long run. Why these and not a vendored set: docs/security.md.

export interface FormatRule {
  id: string;
  keywords: readonly string[];
  pattern: string;
  flags?: string;
  group?: number;
  boundary?: boolean;
}

/** Pinned with this table; bump when a rule changes, so logs say which table a finding came from. */
export const RULES_VERSION = "latch-disclose-rules-1";

export const FORMAT_RULES: readonly FormatRule[] = [
  {
    id: "aws-access-token",
    keywords: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    pattern: "(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\\b",
    boundary: true,
  },
  { id: "github-pat", keywords: ["ghp_"], pattern: "ghp_[0-9a-zA-Z]{36}\\b", boundary: true },
  {
    id: "github-fine-grained-pat",
    keywords: ["github_pat_"],
    pattern: "github_pat_[0-9a-zA-Z_]{82}\\b",
    boundary: true,
  },
  { id: "github-oauth", keywords: ["gho_"], pattern: "gho_[0-9a-zA-Z]{36}\\b", boundary: true },
  { id: "github-app-token", keywords: ["ghu_", "ghs_"], pattern: "gh[us]_[0-9a-zA-Z]{36}\\b", boundary: true },
  { id: "github-refresh-token", keywords: ["ghr_"], pattern: "ghr_[0-9a-zA-Z]{36}\\b", boundary: true },
  { id: "gitlab-pat", keywords: ["glpat-"], pattern: "glpat-[0-9a-zA-Z_-]{20,64}", boundary: true },
  { id: "npm-access-token", keywords: ["npm_"], pattern: "npm_[a-zA-Z0-9]{36}\\b", boundary: true },
  { id: "slack-token", keywords: ["xox"], pattern: "xox[abposer]-[0-9A-Za-z-]{10,250}", boundary: true },
  {
    id: "slack-webhook-url",
    keywords: ["hooks.slack.com"],
    pattern: "https://hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{40,60}",
  },
  {
    id: "anthropic-api-key",
    keywords: ["sk-ant-"],
    pattern: "sk-ant-(?:api|admin)\\d{2}-[a-zA-Z0-9_-]{80,120}",
    boundary: true,
  },
  {
    id: "openai-api-key",
    keywords: ["T3BlbkFJ"],
    boundary: true,
    pattern: "sk-(?:proj|svcacct|admin)?-?[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200}",
  },
  { id: "google-api-key", keywords: ["AIza"], pattern: "AIza[0-9A-Za-z_-]{35}\\b", boundary: true },
  {
    id: "stripe-secret-key",
    keywords: ["sk_live_", "rk_live_"],
    pattern: "[sr]k_live_[0-9a-zA-Z]{24,99}\\b",
    boundary: true,
  },
  {
    id: "private-key",
    keywords: ["PRIVATE KEY"],
    // A body of at least 64 characters: the header alone (docs, parsers' string constants) is no key.
    pattern:
      "-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\\s\\S]{64,16384}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
  },
  {
    id: "jwt",
    keywords: ["eyJ"],
    boundary: true,
    pattern: "eyJ[A-Za-z0-9_-]{10,4096}\\.eyJ[A-Za-z0-9_-]{10,8192}\\.[A-Za-z0-9_-]{16,1024}",
  },
  {
    id: "connection-string-password",
    keywords: ["://"],
    // scheme://user:PASSWORD@host; the password is what is redacted. Placeholders (`${…}`, `<…>`,
    // `password`, `****`) are no secret and are skipped by the scanner (PLACEHOLDER_PASSWORDS). Led
    // by `://`, the scheme before it checked by the scanner (SCHEME).
    pattern: "://[^\\s:@/'\"`<>]{1,64}:([^\\s:@/'\"`<>]{6,128})@[a-zA-Z0-9[]",
    group: 1,
  },
];

/** Passwords in connection strings that are examples, not secrets. */
export const PLACEHOLDER_PASSWORDS =
  /^(?:\$\{.*\}|\$[A-Z_]+|%[a-z_]+%|\{\{.*\}\}|\*+|x+|pass(?:word|wd)?\d*|secret|changeme|example|your[-_]?password|mypassword|p@ssw0rd)$/i;
