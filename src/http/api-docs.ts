import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiResponse } from '@nestjs/swagger';

/** An OpenAPI schema object (what @nestjs/swagger's decorators take). */
type SchemaObject = Record<string, any>;
import type { TSchema } from '@sinclair/typebox';
import { ErrorCode, statusOf, toProblem } from '../common/errors.js';

/** Named response schemas, listed under components.schemas in the OpenAPI document. */
const components = new Map<string, TSchema>();

/**
 * A TypeBox schema (JSON Schema) as an OpenAPI 3.0 schema object: no symbols, `const` as a
 * one-value `enum`, a union with null as `nullable`, a union of literals as one `enum`, a record
 * as `additionalProperties`.
 */
export function apiSchema(schema: TSchema): SchemaObject {
  return toOpenApi(JSON.parse(JSON.stringify(schema)) as SchemaObject);
}

function toOpenApi(s: SchemaObject): SchemaObject {
  if (Array.isArray(s)) return s.map(toOpenApi);
  if (s === null || typeof s !== 'object') return s;
  const out: SchemaObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' || k === 'patternProperties') out[k] = Object.fromEntries(Object.entries(v as object).map(([p, ps]) => [p, toOpenApi(ps)]));
    else if (k === 'items' || k === 'additionalProperties' || k === 'not') out[k] = typeof v === 'object' ? toOpenApi(v) : v;
    else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') out[k] = (v as SchemaObject[]).map(toOpenApi);
    else out[k] = v;
  }
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  if (out.patternProperties) {
    out.additionalProperties = Object.values(out.patternProperties)[0] ?? true;
    delete out.patternProperties;
  }
  if (Array.isArray(out.anyOf)) {
    const variants = out.anyOf as SchemaObject[];
    const nonNull = variants.filter((v) => v.type !== 'null');
    const nullable = nonNull.length < variants.length;
    let merged: SchemaObject | undefined;
    if (nonNull.length === 1) merged = { ...nonNull[0] };
    else if (nonNull.length > 1 && nonNull.every((v) => Array.isArray(v.enum) && v.type === nonNull[0].type)) {
      merged = { type: nonNull[0].type, enum: nonNull.flatMap((v) => v.enum as unknown[]) };
    }
    if (merged) {
      delete out.anyOf;
      Object.assign(out, merged, nullable ? { nullable: true } : {});
    }
  }
  return out;
}

export function registeredSchemas(): Record<string, SchemaObject> {
  return Object.fromEntries([...components].map(([name, s]) => [name, apiSchema(s)]));
}

/** Registers `schema` as components.schemas[name] and returns a $ref to it. */
export function ref(name: string, schema: TSchema): { $ref: string } {
  components.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

/** A JSON request body validated by this schema; a route that reads a body can also time out reading it (408). */
export function ApiJsonBody(schema: TSchema, required = true): MethodDecorator {
  return applyDecorators(ApiBody({ schema: apiSchema(schema), required }), problemResponse(408, ['REQUEST_TIMEOUT']));
}

/** A JSON answer with this status and schema. */
export function ApiJson(status: number, schema: TSchema | { $ref: string }, description?: string): MethodDecorator {
  const s = '$ref' in schema && typeof schema.$ref === 'string' ? schema : apiSchema(schema as TSchema);
  return ApiResponse({ status, description: description ?? 'OK', schema: s as SchemaObject });
}

const EXAMPLE_DETAIL: Partial<Record<ErrorCode, [string, Record<string, unknown>]>> = {
  VALIDATION_FAILED: ['items[0].quantity: quantity must be an integer from 1 to 1000', { errors: [{ field: 'items[0].quantity', message: 'quantity must be an integer from 1 to 1000' }] }],
  INSUFFICIENT_STOCK: ['only 1 of SKU-1 available, 2 requested', { sku: 'SKU-1', requested: 2, available: 1 }],
  UNKNOWN_SKU: ['SKU SKU-9 does not exist', { sku: 'SKU-9' }],
  HOLD_LIMIT_REACHED: ['customer c-1 already holds 3 orders', { limit: 3 }],
  RATE_LIMITED: ['more than 600 requests a minute from this address', {}],
  REQUEST_TIMEOUT: ['the request did not arrive in full within 30 s', {}],
};

/**
 * The contract errors a route can answer, as problem+json responses grouped by status, each code
 * with an example. A route that takes a credential (UNAUTHORIZED) can also answer RATE_LIMITED:
 * wrong credentials are throttled wherever they are presented (credential-throttle.ts).
 */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  const implied: ErrorCode[] = codes.includes('UNAUTHORIZED') ? ['RATE_LIMITED'] : [];
  for (const code of [...codes, ...implied, 'SERVICE_UNAVAILABLE' as const]) {
    const status = statusOf(code);
    if (!byStatus.get(status)?.includes(code)) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(...[...byStatus].map(([status, list]) => problemResponse(status, list)));
}

/** One status's problem+json response, each code with an example. */
function problemResponse(status: number, codes: ErrorCode[]): MethodDecorator {
  return ApiResponse({
    status,
    description: codes.join(', '),
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/Problem' },
        examples: Object.fromEntries(
          codes.map((code) => {
            const [detail, extra] = EXAMPLE_DETAIL[code] ?? [code.toLowerCase().replace(/_/g, ' '), {}];
            return [code, { value: toProblem(code, detail, extra) }];
          }),
        ),
      },
    },
  });
}
