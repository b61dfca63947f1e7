// ESLint with typescript-eslint's type-aware rules over src, test, bench and scripts (npm test runs it).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const nodeTest = {
  from: "package",
  package: "node:test",
  name: ["test", "it", "describe", "suite", "before", "after", "beforeEach", "afterEach"],
};

// A spread's items are a call's arguments, and V8 throws RangeError past ~125,000 of them: a walk's
// listing spread into push() let one folder of 150,000 links crash the sandbox guard (review g42).
const PUSH_SPREAD = {
  selector:
    "CallExpression[callee.property.name=/^(push|unshift)$/] > SpreadElement, CallExpression[callee.object.name='Math'][callee.property.name=/^(max|min)$/] > SpreadElement",
  message:
    "Loop instead (for (const x of items) out.push(x), or reduce): a spread past ~125,000 items throws RangeError.",
};

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "bench/corpus/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      "@typescript-eslint/no-floating-promises": ["error", { allowForKnownSafeCalls: [nodeTest] }],
      // An async function without await is how a sync body meets an async interface (tools' plan/run).
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // Node's JS realpathSync circles forever on links whose targets take `..` after another link
    // (f -> q/f, q -> sub/.., sub -> d/x), and glibc's realpath(3) (realpathSync.native) rereads each
    // link's target from its start (seconds for a chain a model's shell makes): src/fs/realpath.ts asks
    // the kernel, and is the one place that may fall back to realpath(3).
    files: ["src/**"],
    ignores: ["src/fs/realpath.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        PUSH_SPREAD,
        {
          selector:
            "CallExpression[callee.name='realpathSync'], CallExpression[callee.property.name='realpathSync'], MemberExpression[object.name='realpathSync'][property.name='native'], MemberExpression[object.property.name='realpathSync'][property.name='native']",
          message:
            "Use realpathOf (src/fs/realpath.ts): Node's realpaths can loop forever or take seconds on links a model makes.",
        },
      ],
    },
  },
  { files: ["src/fs/realpath.ts"], rules: { "no-restricted-syntax": ["error", PUSH_SPREAD] } },
  {
    // Tests, benches and scripts read JSON results as `any` on purpose: a wrong shape fails the assertion.
    files: ["test/**", "bench/**", "scripts/**"],
    rules: {
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  { files: ["**/*.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  {
    // Plain JS files get no type information: name node's globals they use; TS files rely on tsc.
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: {
      globals: Object.fromEntries(
        ["process", "console", "Buffer", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "URL"].map(
          (g) => [g, "readonly"],
        ),
      ),
    },
  },
);
