// Lint: typescript-eslint's recommended rules on src/, test/, bench/ and scripts/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "gen/**", "node_modules/**", "coverage/**", ".tmp/**", "build/**", "tools/**"] },
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
    files: ["src/core/clock.ts", "test/**", "bench/**", "scripts/**"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
