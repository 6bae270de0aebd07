import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate, ValidationError } from 'class-validator';
import { AppError, FieldError } from './errors.js';

export const SKU_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,255}$/;

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = prefix ? (/^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`) : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/**
 * Validates bodies and queries against their DTO classes: strict types (no "2" for 2), unknown
 * fields refused, and every failure answered VALIDATION_FAILED with `errors: [{ field, message }]`.
 */
@Injectable()
export class StrictValidationPipe implements PipeTransform {
  async transform(value: unknown, meta: ArgumentMetadata): Promise<unknown> {
    const type = meta.metatype;
    if ((meta.type !== 'body' && meta.type !== 'query') || !type || [String, Number, Boolean, Object, Array].includes(type as never)) {
      return value;
    }
    const input = value === undefined && meta.type === 'body' ? {} : value;
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw AppError.validation([{ field: meta.type, message: `the ${meta.type} must be a JSON object` }]);
    }
    const instance = plainToInstance(type as new () => object, input);
    const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
    if (errors.length) throw AppError.validation(flatten(errors));
    return instance;
  }
}
