// Lint: typescript-eslint's recommended rules on src/, test/, bench/, scripts/ and packages/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "gen/**", "node_modules/**", "coverage/**", ".tmp/**", "build/**", "tools/**", "packages/*/dist/**", "packages/client/src/gen/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", performance: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", AbortController: "readonly", fetch: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", URLSearchParams: "readonly", structuredClone: "readonly", queueMicrotask: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-syntax": [
        "error",
        { selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']", message: "Use the injected Clock (src/core/clock.ts)." },
        {
          selector: "CallExpression[callee.type='Identifier'][callee.name=/^(setTimeout|setInterval|setImmediate|clearTimeout|clearInterval|clearImmediate)$/]",
          message: "Schedule through the injected Timers (src/core/clock.ts).",
        },
      ],
    },
  },
  {
    files: ["src/core/clock.ts", "test/**", "bench/**", "scripts/**", "packages/*/test/**", "packages/*/scripts/**", "packages/client/src/runtime.ts", "packages/client/src/fetch-types.ts", "packages/cli/src/io.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    // The dashboard runs in the browser: its live views tick with the page's own clock and timers
    // (there is no server Clock to inject there), and Node built-ins cannot be bundled.
    files: ["dashboard/src/**"],
    rules: {
      "no-restricted-syntax": "off",
      "no-restricted-imports": ["error", { patterns: [{ group: ["node:*"], message: "The dashboard runs in browsers." }] }],
    },
  },
  {
    // The client core also runs in browsers: Node built-ins and undici only in its Node entry.
    files: ["packages/client/src/**"],
    ignores: ["packages/client/src/node.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["node:*", "undici", "fs", "http", "https", "net", "tls", "stream", "buffer"], message: "The core of @hypercache/client runs in browsers: Node-only code goes in src/node.ts." }] }],
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
