import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { OptionalField } from './optional';

/** An optional field that must be one of `values`, documented as their enum; 400 names them all. */
export function OptionalOneOf(field: string, values: readonly string[], description?: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ enum: values, description }),
    OptionalField(),
    IsIn(values, { message: `${field} must be one of ${values.join(', ')}` }),
  );
}

/** A page's optional `limit`: an integer from 1 to `max` (a query string's text, converted). */
export function PageLimit(max: number, defaultLimit: number): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: max, default: defaultLimit }),
    OptionalField(),
    Type(() => Number),
    IsInt({ message: 'limit must be an integer' }),
    Min(1, { message: 'limit must be at least 1' }),
    Max(max, { message: `limit must be at most ${max}` }),
  );
}
