// Prints the README's configuration table from src/config/settings.ts (the one source of truth).
// `node --import tsx/esm scripts/config-table.ts` prints it; test/unit/config/readme.test.ts
// checks that README.md holds exactly these rows.
import { SETTINGS } from "../src/config/index.js";

export function configTableMarkdown(): string {
  const rows = SETTINGS.map((s) => {
    const def = s.default === "" ? "(empty)" : `\`${s.default}\``;
    const meaning = s.meaning.replace(/\|/g, "\\|");
    return `| \`${s.name}\` | ${def} | ${meaning}${s.secret ? " (secret: shown as `[redacted]` by /config)" : ""} |`;
  });
  return ["| Variable | Default | Meaning |", "|---|---|---|", ...rows].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`${configTableMarkdown()}\n`);
