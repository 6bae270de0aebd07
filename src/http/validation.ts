import { Injectable, PipeTransform } from '@nestjs/common';
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { AppError, FieldError } from '../common/errors.js';
import { inspect } from './json-body.js';

/**
 * Bodies and queries are checked against JSON Schemas (the same ones the OpenAPI document shows),
 * compiled once to plain functions by ajv: strict types (no "2" for 2), unknown fields refused
 * (`__proto__` and `constructor` too), every failure VALIDATION_FAILED with `errors: [{ field, message }]`.
 * A schema may say how a broken value is described with `x-message`. Each is compiled on its first
 * use, not at start-up: compiling all of them was a tenth of a start's CPU, and most processes
 * (workers, the suite's short-lived ones) never see most routes. A spec compiles every schema the
 * routes use (validation-schemas.spec.ts), so a broken one fails the build, not a request.
 */
const ajv = new Ajv({ allErrors: true, verbose: true, coerceTypes: false, useDefaults: false, strict: true });
ajv.addVocabulary(['x-message', 'example']);

const compiled = new WeakMap<object, ValidateFunction>();

export function compile(schema: TSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

function fieldOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function describe(e: ErrorObject, root: string): FieldError {
  const at = fieldOf(e.instancePath);
  const join = (name: string) => (at ? `${at}.${name}` : name);
  if (e.keyword === 'additionalProperties') {
    const field = join(String(e.params.additionalProperty));
    return { field, message: 'is not an allowed field' };
  }
  if (e.keyword === 'required') {
    const field = join(String(e.params.missingProperty));
    return { field, message: 'is required' };
  }
  const field = at || root;
  const custom = (e.parentSchema as { 'x-message'?: string } | undefined)?.['x-message'];
  return { field, message: custom ?? e.message ?? 'is invalid' };
}

/** Validates `value` or throws VALIDATION_FAILED naming every broken field. */
export function validate<S extends TSchema>(schema: S, value: unknown, root: 'body' | 'query'): Static<S> {
  const fn = compile(schema);
  if (fn(value)) return value as Static<S>;
  const seen = new Set<string>();
  const errors = (fn.errors ?? []).map((e) => describe(e, root)).filter((e) => !seen.has(e.message) && seen.add(e.message));
  throw AppError.validation(errors);
}

/** A request body against its schema: a missing body counts as `{}`, anything but an object is refused. */
export function validateBody<S extends TSchema>(schema: S, value: unknown): Static<S> {
  const input = value === undefined ? {} : value;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw AppError.validation([{ field: 'body', message: 'the body must be a JSON object' }]);
  }
  return validate(schema, input, 'body');
}

/** `@Body(new BodyPipe(Schema))`: validateBody as a Nest pipe. */
@Injectable()
export class BodyPipe<S extends TSchema> implements PipeTransform {
  constructor(private readonly schema: S) {}

  transform(value: unknown): Static<S> {
    return validateBody(this.schema, value);
  }
}

/** `@Query(new QueryPipe(Schema))`: query strings obey the same input rules as bodies. */
@Injectable()
export class QueryPipe<S extends TSchema> implements PipeTransform {
  constructor(private readonly schema: S) {}

  transform(value: unknown): Static<S> {
    const input = { ...((value as Record<string, unknown>) ?? {}) };
    const bad = inspect(input, '');
    if (bad) throw AppError.validation([bad]);
    return validate(this.schema, input, 'query');
  }
}
