import { ValidationOptions, Matches } from 'class-validator';

/** A variable that takes one value: a comma means someone put a list where one value belongs. */
export function SingleValue(options: ValidationOptions = {}): PropertyDecorator {
  return Matches(/^[^,]+$/, { message: '$property takes a single value, without commas', ...options });
}
