/** Where the suite finds Postgres and Redis: the local services by default. */
export { ADMIN_TOKEN, databaseUrl, PG_ADMIN_URL, REDIS_URL, TEMPLATE_DB } from './global-setup.js';
