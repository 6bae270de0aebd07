import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { tableScope } from '../src/access/scopes.js';
import { stableJson } from '../src/ops/stable-json.js';
import { useHarness } from './support/harness.js';

/**
 * The contract travels with the code: openapi.json at the repository root is what the service
 * serves at /docs-json. A route or schema change without `npm run openapi` fails here.
 */
const h = useHarness({});
const COMMITTED = resolve('openapi.json');
const STALE = 'openapi.json is not what the service serves: run `npm run openapi` and commit the result';

type Operation = { operationId?: string; security?: Record<string, unknown>[]; 'x-required-scope'?: string; responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };
const operations = (doc: any): [string, Operation][] =>
  Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]));

let served: any;
beforeAll(async () => {
  const res = await h.api.get('/docs-json');
  expect(res.status).toBe(200);
  served = res.body;
});

it('openapi.json at the repository root is exactly what /docs-json serves', () => {
  const committed = readFileSync(COMMITTED, 'utf8');
  // A structural diff first (readable on failure), then the bytes: key order and the trailing newline.
  expect([STALE, JSON.parse(committed)]).toEqual([STALE, served]);
  expect([STALE, committed]).toEqual([STALE, stableJson(served)]);
});

it('npm run openapi builds the same document with no database or Redis to reach', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
  execFileSync(process.execPath, ['dist/openapi.js', out], {
    env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere', REDIS_URL: 'redis://127.0.0.1:1' },
    timeout: 30_000,
  });
  expect(readFileSync(out, 'utf8')).toBe(readFileSync(COMMITTED, 'utf8'));
});

it('openapi.json is valid OpenAPI 3', () => {
  // swagger-parser needs require(esm), which Node has and Jest's module runtime here lacks: run it in node.
  const verdict = execFileSync(process.execPath, ['-e', `require('@apidevtools/swagger-parser').validate(${JSON.stringify(COMMITTED)}).then(() => console.log('valid'), (e) => console.log('invalid: ' + e.message))`]);
  expect(verdict.toString().trim()).toBe('valid');
});

it('names every operation cleanly and uniquely', () => {
  const ids = operations(served).map(([route, op]) => [route, op.operationId]);
  for (const [route, id] of ids) expect([route, /^[a-z][A-Za-z0-9]*$/.test(id ?? '')]).toEqual([route, true]);
  expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
});

it('lists the problem+json error answers of every route (ApiErrors)', () => {
  for (const [route, op] of operations(served)) {
    const answers = Object.entries(op.responses).filter(([status]) => Number(status) >= 400);
    const problems = answers.filter(([, a]) => a.content?.['application/problem+json']);
    expect([route, problems.length > 0]).toEqual([route, true]);
    for (const [status, a] of problems) expect([route, status, a.content!['application/problem+json'].schema]).toEqual([route, status, { $ref: '#/components/schemas/Problem' }]);
    // The other 4xx answers carry a body of their own (Confirm's 402 answers the PAY_FAILED order).
    for (const [status, a] of answers) expect([route, status, !!a.content?.['application/problem+json'] || !!a.content?.['application/json']?.schema]).toEqual([route, status, true]);
  }
});

it('admin and participant routes take the root token or an API key, name the scope they need, and describe their answers', () => {
  const scheme = served.components.securitySchemes.adminToken;
  expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(scheme.bearerFormat).toBeUndefined(); // not a JWT
  expect(scheme.description).toMatch(/root token \(ADMIN_TOKEN.*or an API key/);
  const guarded = operations(served).filter(([route]) => / \/(admin|tcc)\//.test(route));
  expect(guarded.length).toBeGreaterThanOrEqual(14);
  for (const [route, op] of guarded) {
    const expected = route.includes(' /admin/') ? [{ adminToken: [] }, { consoleSession: [] }] : [{ adminToken: [] }];
    expect([route, op.security]).toEqual([route, expected]);
    // The scope the service enforces for the route (access/scopes.ts's table).
    const [method, path] = route.split(' ');
    expect([route, op['x-required-scope']]).toEqual([route, tableScope(method, path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'))]);
    const ok = Object.entries(op.responses).filter(([status]) => Number(status) < 300);
    expect([route, ok.length > 0]).toEqual([route, true]);
    for (const [status, answer] of ok) expect([route, status, status === '204' || !!answer.content?.['application/json']?.schema]).toEqual([route, status, true]);
  }
});
