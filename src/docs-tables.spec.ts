import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Type } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { envSchema, parseEnv } from './config/env.schema.js';

/** A markdown table's rows after its header, each cell trimmed. */
function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  if (start === -1) throw new Error(`no table headed ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

const names = (cell: string) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();

describe('docs/ARCHITECTURE.md, "Modules"', () => {
  it("lists every module of ROLE=all with exactly its imports and exports", async () => {
    const app = await NestFactory.createApplicationContext(AppModule.forRole(new AppConfig(parseEnv({ ROLE: 'all' }))), { preview: true, logger: false, abortOnError: false });
    try {
      const ours = (name: string) => name !== 'AppModule' && !name.startsWith('Internal') && name !== 'ScheduleModule' && name !== 'DiscoveryModule'; // Nest's own
      const modules = [...app.get(ModulesContainer).values()];
      // A global module is bound into every module's imports: the table names it only as global.
      const global = new Set(modules.filter((m) => m.isGlobal).map((m) => m.metatype.name));
      const actual = modules
        .filter((m) => ours(m.metatype.name))
        .map((m) => ({
          module: m.metatype.name,
          imports: [...m.imports].map((i) => i.metatype.name).filter((n) => !n.startsWith('Internal') && !global.has(n) && n !== m.metatype.name).map((n) => (n === 'ScheduleModule' ? n : n.replace(/Module$/, ''))).sort(),
          exports: [...m.exports].map((e) => (typeof e === 'function' ? (e as Type).name : String(e))).filter((n) => !n.endsWith('Module')).sort(),
        }))
        .sort((a, b) => a.module.localeCompare(b.module));
      const documented = tableRows(readFileSync('docs/ARCHITECTURE.md', 'utf8'), '| module | imports | exports |')
        .map(([module, imports, exports]) => ({
          module: names(module)[0],
          imports: imports.startsWith('—') ? [] : imports.split(',').map((s) => s.trim()).sort(),
          exports: names(exports),
        }))
        .sort((a, b) => a.module.localeCompare(b.module));
      expect(documented).toEqual(actual);
    } finally {
      await app.close();
    }
  });
});

describe('docs/CONFIGURATION.md', () => {
  it('has a row for every variable of the env schema, and none that the schema does not read', () => {
    const rows = tableRows(readFileSync('docs/CONFIGURATION.md', 'utf8'), '| variable | default | meaning |');
    const documented = rows.map(([name]) => name).sort();
    const shape = (envSchema as unknown as { in: { shape: Record<string, unknown> } }).in.shape;
    expect(documented).toEqual(Object.keys(shape).sort());
  });

  it('gives each variable the default the schema applies', () => {
    const defaults = parseEnv({}) as unknown as Record<string, unknown>;
    const rows = tableRows(readFileSync('docs/CONFIGURATION.md', 'utf8'), '| variable | default | meaning |');
    const wrong = rows
      .filter(([name, given]) => {
        const value = defaults[name];
        if (/^[A-Z_]+$/.test(given) && given in defaults) return value !== defaults[given]; // defaults to another variable's value
        if (value === undefined) return !/^\(none\)|^[A-Z_]+$/.test(given); // unset: "(none)" or the variable it falls back to
        return !given.startsWith(String(value));
      })
      .map(([name, given]) => `${name}: documented ${given}, schema ${String(defaults[name])}`);
    expect(wrong).toEqual([]);
  });
});
