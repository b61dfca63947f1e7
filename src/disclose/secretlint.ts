// The maintained half of the format rules (issue 29): secretlint's recommended preset, pinned, run on
// every scanned string beside latch's own table (rules.ts), which keeps the formats the preset lacks
// (GitLab, Google API keys, Stripe, JWTs, other schemes' connection strings). Why this set: it is
// published on npm as data-bearing rules with their own tests, released monthly, MIT, no runtime
// dependency, and runs in Node as is (gitleaks' rules are Go regexes). 11.7.1 is the last release
// that supports Node 20; 12 and later need Node 22.
//
// Each preset rule runs only on windows around a keyword its patterns cannot match without (the
// table below, checked against the preset's patterns by test/disclose/secretlint.test.ts), so text
// without any costs one pass of one regex. A window reaches `reach` characters both ways from the
// keyword, widened to whole lines: longer than any match of that rule, so a window never cuts one.
import type { SecretLintCoreConfigRule, SecretLintRuleCreator } from "@secretlint/types";
import { keywordFinder, type KeywordHit } from "./keywords.js";
import type { Finding } from "./scan.js";

export const SECRETLINT_VERSION = "@secretlint/secretlint-rule-preset-recommend@11.7.1";

interface Trigger {
  /** The preset rule's id without its package prefix. */
  rule: string;
  /**
   * Literals one of which every match of the rule contains, case as the pattern has it. Where the
   * pattern ignores case, the spellings people write (a URI in odd mixed case is still found by
   * latch's own connection-string rule, whose keyword is `://`): a case-blind keyword would cost the
   * one pass over every string a third of its speed.
   */
  keywords: readonly string[];
  /** Characters each way from a keyword that hold any match around it; 0: the whole string. */
  reach: number;
  /**
   * How the rule is shown the text: some rules look at the file's name or extension (the GCP rule
   * reads JSON only from `.json`; the npm rule checks `_authToken=` only in `.npmrc`). A path given
   * here is a name, never read: `noPhysicFilePath` is set (and the GCP rule's `.p12` branch, which
   * would read it, is never chosen).
   */
  as?: readonly { ext: string; filePath: string }[];
  /**
   * For keywords common in ordinary text (`://`, `secret`): the part of the rule's own pattern that
   * must follow at the keyword (sticky, tried at its index), so a URL without a password opens no
   * window. Taken from the pinned preset's patterns; a newer preset is checked by the tests.
   */
  confirm?: RegExp;
}

const TRIGGERS: readonly Trigger[] = [
  // The preset scans only secret access keys by default (its ID rules are off): the table's
  // aws-access-token finds key IDs. The pattern spells SECRET, secret and Secret.
  { rule: "aws", keywords: ["SECRET", "secret", "Secret"], reach: 300, confirm: /secret_?access_?key/iy },
  // The service account JSON: the rule parses the whole string.
  { rule: "gcp", keywords: ["private_key_id"], reach: 0, as: [{ ext: ".json", filePath: "scanned.json" }] },
  {
    rule: "npm",
    keywords: ["x-oauth-basic", "_authToken=", "npm_"],
    reach: 600,
    // As package.json (the x-oauth-basic URL) and as .npmrc (`_authToken=`); npm_ tokens in both.
    as: [
      { ext: ".json", filePath: "package.json" },
      { ext: ".npmrc", filePath: "scanned.npmrc" },
    ],
  },
  {
    rule: "slack",
    keywords: ["xoxb-", "xoxp-", "xapp-", "xoxa-", "xoxo-", "xoxr-", "hooks.slack.com"],
    reach: 1200,
  },
  {
    rule: "basicauth",
    keywords: ["://"],
    reach: 1100,
    confirm: /:\/\/[-a-zA-Z0-9_]{1,256}:[-a-zA-Z0-9_]{1,256}@/y,
  },
  { rule: "openai", keywords: ["T3BlbkFJ"], reach: 200 },
  { rule: "anthropic", keywords: ["sk-ant-api0"], reach: 200 },
  { rule: "linear", keywords: ["lin_api_"], reach: 200 },
  { rule: "privatekey", keywords: ["PRIVATE KEY"], reach: 10_300 },
  { rule: "sendgrid", keywords: ["SG."], reach: 450 },
  { rule: "shopify", keywords: ["shppa_", "shpca_", "shpat_", "shpss_"], reach: 100 },
  { rule: "github", keywords: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"], reach: 120 },
  { rule: "1password", keywords: ["ops_ey"], reach: 1400 },
  {
    rule: "database-connection-string",
    keywords: [
      "mongodb",
      "MONGODB",
      "MongoDB",
      "Mongodb",
      "mysql",
      "MYSQL",
      "MySQL",
      "Mysql",
      "postgres",
      "POSTGRES",
      "Postgres",
    ],
    reach: 1100,
    // The rule reports a URI only with a user and a password.
    confirm: /(?:mongodb(?:\+srv)?|mysqlx?|postgres(?:ql)?):\/\/[^:/\s]{1,100}:[^@/\s]{1,200}@/iy,
  },
];

/**
 * The preset's findings under names that read like latch's own (gitleaks' ids where they mean the
 * same thing), so a redaction says what it hid; a message this table does not know yet (a newer
 * preset) is named `secretlint-<rule>`.
 */
const NAMES: Record<string, string> = {
  AWSAccessKeyID: "aws-access-token",
  AWSSecretAccessKey: "aws-secret-access-key",
  AWSAccountID: "aws-account-id",
  PrivateKeyJSON: "gcp-service-account-key",
  PrivateKeyP12: "gcp-service-account-key",
  PackageJSON_xOauthToken: "github-oauth-url",
  Npmrc_authToken: "npmrc-auth-token",
  NPM_ACCESS_TOKEN: "npm-access-token",
  SLACK_TOKEN: "slack-token",
  IncomingWebhook: "slack-webhook-url",
  BasicAuth: "basic-auth-url",
  OPENAI_TOKEN: "openai-api-key",
  ANTHROPIC_API_KEY: "anthropic-api-key",
  LINEAR_API_TOKEN: "linear-api-key",
  PrivateKey: "private-key",
  SENDGRID_KEY: "sendgrid-api-key",
  SHOPIFY_KEY: "shopify-token",
  GITHUB_TOKEN: "github-pat",
  OPS_TOKEN: "1password-service-token",
  MongoDBConnection: "connection-string-password",
  MySQLConnection: "connection-string-password",
  PostgreSQLConnection: "connection-string-password",
};

/** The ids a finding of the preset can carry, for `latch explain` and the docs. */
export const SECRETLINT_FINDING_IDS: readonly string[] = [...new Set(Object.values(NAMES))].sort();

/** Every keyword of the table: scan.ts finds them in the same pass as its own table's. */
export const MAINTAINED_KEYWORDS: readonly string[] = TRIGGERS.flatMap((t) => t.keywords);
const findKeywords = keywordFinder(MAINTAINED_KEYWORDS);
const byKeyword = new Map<string, Trigger[]>();
for (const t of TRIGGERS) for (const k of t.keywords) byKeyword.set(k, [...(byKeyword.get(k) ?? []), t]);

interface Window {
  start: number;
  end: number;
  rules: Set<string>;
}

const byRule = new Map(TRIGGERS.map((t) => [t.rule, t]));

/** The windows of `text` where some preset rule could match, joined where they overlap. */
function windows(text: string, hits: readonly KeywordHit[]): Window[] {
  const spans: { start: number; end: number; rule: string }[] = [];
  const add = (at: number, key: string) => {
    for (const t of byKeyword.get(key) ?? []) {
      if (t.confirm) {
        t.confirm.lastIndex = at;
        if (!t.confirm.test(text)) continue;
      }
      if (t.reach === 0) spans.push({ start: 0, end: text.length, rule: t.rule });
      else {
        const a = Math.max(0, at - t.reach);
        const b = Math.min(text.length, at + key.length + t.reach);
        const ls = text.lastIndexOf("\n", a) + 1;
        const le = text.indexOf("\n", b);
        spans.push({ start: ls, end: le === -1 ? text.length : le, rule: t.rule });
      }
    }
  };
  for (const h of hits) add(h.at, h.key);
  if (spans.length === 0) return [];
  spans.sort((x, y) => x.start - y.start);
  const out: Window[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) {
      last.end = Math.max(last.end, s.end);
      last.rules.add(s.rule);
    } else out.push({ start: s.start, end: s.end, rules: new Set([s.rule]) });
  }
  return out;
}

type Preset = { rules: SecretLintRuleCreator[]; lintSource: typeof import("@secretlint/core").lintSource };
let preset: Promise<Preset> | undefined;

/** Loaded at the first string that holds a keyword: most calls never need it, and a start stays small. */
function loadPreset(): Promise<Preset> {
  preset ??= Promise.all([import("@secretlint/secretlint-rule-preset-recommend"), import("@secretlint/core")]).then(
    ([p, core]) => ({ rules: p.rules as SecretLintRuleCreator[], lintSource: core.lintSource }),
  );
  return preset;
}

const PREFIX = "@secretlint/secretlint-rule-";
const TEXT = { ext: ".txt", filePath: "scanned.txt" };

/**
 * The preset's findings in `text`, as ranges of `text`. `hits`: the keywords found in it, when the
 * caller's own pass found them already (scan.ts); else found here.
 */
export async function scanMaintained(
  text: string,
  hits: readonly KeywordHit[] = findKeywords(text),
): Promise<Finding[]> {
  const ws = windows(text, hits);
  if (ws.length === 0) return [];
  const { rules, lintSource } = await loadPreset();
  const found: Finding[] = [];
  for (const w of ws) {
    const content = text.slice(w.start, w.end);
    // The rules of this window, grouped by how each is shown the text.
    const runs = new Map<string, { as: { ext: string; filePath: string }; config: SecretLintCoreConfigRule[] }>();
    for (const r of rules) {
      const t = byRule.get(r.meta.id.slice(PREFIX.length));
      if (!t || !w.rules.has(t.rule)) continue;
      for (const as of t.as ?? [TEXT]) {
        const key = as.filePath;
        if (!runs.has(key)) runs.set(key, { as, config: [] });
        runs.get(key)!.config.push({ id: r.meta.id, rule: r });
      }
    }
    for (const { as, config } of runs.values()) {
      const result = await lintSource({
        source: { content, ext: as.ext, filePath: as.filePath, contentType: "text" },
        options: { config: { rules: config }, noPhysicFilePath: true },
      });
      for (const m of result.messages) {
        const rule = NAMES[m.messageId] ?? `secretlint-${m.ruleId.replace(PREFIX, "")}`;
        const [a, b] = covering(content, m.range, m.data);
        found.push({ rule, start: w.start + a, end: w.start + b });
      }
    }
  }
  return found;
}

/**
 * The reported range, widened to cover the secret the message names: some of the preset's rules
 * report the start of the whole match with the length of the token's group (`_authToken=` + a token's
 * head), which would leave the token's tail shown. The values stay on this thread.
 */
function covering(content: string, range: readonly [number, number], data: unknown): [number, number] {
  let [a, b] = range;
  if (data && typeof data === "object") {
    for (const v of Object.values(data as Record<string, unknown>)) {
      if (typeof v !== "string" || v.length < 4) continue;
      let at = content.indexOf(v, Math.max(0, a - v.length));
      if (at === -1 || at > b) at = content.lastIndexOf(v, b);
      if (at === -1) continue;
      a = Math.min(a, at);
      b = Math.max(b, at + v.length);
    }
  }
  return [a, b];
}

/** For the table's own test: each preset rule id with its trigger. */
export const TRIGGER_TABLE = TRIGGERS;
