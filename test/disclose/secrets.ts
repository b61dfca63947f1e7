// Secrets for the disclosure tests, made from random bytes at run time: the repository holds no
// token a scanner would flag, and every run plants different ones.
import { randomBytes } from "node:crypto";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function randomFrom(alphabet: string, n: number): string {
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join("");
}

export const githubPat = () => "ghp" + "_" + randomFrom(ALNUM, 36);
export const awsKey = () => "AK" + "IA" + randomFrom(B32.slice(0, 26) + "234567", 16);
export const gitlabPat = () => "glpat" + "-" + randomFrom(ALNUM, 20);
export const npmToken = () => "npm" + "_" + randomFrom(ALNUM, 36);
export const slackToken = () => "xox" + "b-" + randomFrom("0123456789", 12) + "-" + randomFrom(ALNUM, 24);
export const anthropicKey = () => "sk-ant" + "-api03-" + randomFrom(ALNUM, 93);
export const openaiKey = () => "sk-proj-" + randomFrom(ALNUM, 20) + "T3Blbk" + "FJ" + randomFrom(ALNUM, 20);
export const jwt = () =>
  ["eyJ" + randomFrom(ALNUM, 20), "eyJ" + randomFrom(ALNUM, 40), randomFrom(ALNUM, 43)].join(".");
export const privateKey = () =>
  [
    "-----BEGIN OPENSSH PRIVATE" + " KEY-----",
    ...(randomBytes(300)
      .toString("base64")
      .match(/.{1,70}/g) ?? []),
    "-----END OPENSSH PRIVATE" + " KEY-----",
  ].join("\n");
/** A value for an environment variable: no format, only known because latch holds it (with `+` and `/`, so its URL form differs). */
export const plainSecret = () => `${randomBytes(10).toString("hex")}+${randomBytes(10).toString("hex")}/`;
