import { applyDecorators } from '@nestjs/common';
import { ValidateBy, ValidateIf } from 'class-validator';

/**
 * The one way a DTO field is optional: absent (undefined) skips its checks; null does not. A field
 * that is not `nullable` refuses null with a 400 that says so (class-validator's IsOptional lets
 * null through to the database, where a NOT NULL column answered 500); a `nullable` one (documented
 * `nullable: true`, such as an endpoint's eventTypes, where null means all) takes null as its value.
 */
export function OptionalField({ nullable = false }: { nullable?: boolean } = {}): PropertyDecorator {
  if (nullable) return ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null);
  return applyDecorators(
    ValidateIf((_object: object, value: unknown) => value !== undefined),
    NotNull(),
  );
}

/** Refuses null with a message that says so; for a field whose checks run under a condition of its own. */
export function NotNull(): PropertyDecorator {
  return ValidateBy({
    name: 'isNotNull',
    validator: {
      validate: (value: unknown) => value !== null,
      defaultMessage: (args) => `${args?.property ?? 'the field'} must not be null: leave it out instead`,
    },
  });
}
