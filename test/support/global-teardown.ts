import pg from 'pg';

/** Drops this run's template database (test files drop their own clones). */
export default async function globalTeardown(): Promise<void> {
  const template = process.env.TCC_TEST_TEMPLATE;
  if (!template) return;
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
