import '../common/node-version.js';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { parseEnv } from '../config/env.schema.js';
import { dataSourceOptions } from './options.js';

/**
 * The TypeORM CLI's entry (`npm run migration:revert`, `npm run typeorm`): the same options and env
 * schema as the app, on DATABASE_DIRECT_URL like migrate-cli.ts (which is how migrating is done:
 * it also applies the SQL functions).
 */
const env = parseEnv(process.env);
const cliDataSource = new DataSource(dataSourceOptions(env.DATABASE_DIRECT_URL, 2));
export default cliDataSource;
