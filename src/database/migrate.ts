import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = join(dirname(fileURLToPath(import.meta.url)), 'migrate-cli.js');

/**
 * Runs pending migrations at start-up in a child process (migrate-cli.js), with this process's
 * environment; resolves with the names of the migrations it ran.
 */
export function runPendingMigrations(databaseUrl: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI], { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(stderr.trim() || err.message));
        return;
      }
      const line = stdout.trim().split('\n').pop() ?? '{}';
      resolve((JSON.parse(line) as { migrations?: string[] }).migrations ?? []);
    });
  });
}
