import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = join(dirname(fileURLToPath(import.meta.url)), 'migrate-cli.js');

/** What a start-up brought up to date: the migrations it ran and the SQL function files it applied. */
export interface Migrated {
  migrations: string[];
  sqlFunctions: string[];
}

/**
 * Runs pending migrations, then applies changed SQL functions, at start-up in a child process
 * (migrate-cli.js) with this process's environment.
 */
export function runPendingMigrations(databaseUrl: string): Promise<Migrated> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI], { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(stderr.trim() || err.message));
        return;
      }
      const line = stdout.trim().split('\n').pop() ?? '{}';
      const out = JSON.parse(line) as Partial<Migrated>;
      resolve({ migrations: out.migrations ?? [], sqlFunctions: out.sqlFunctions ?? [] });
    });
  });
}
