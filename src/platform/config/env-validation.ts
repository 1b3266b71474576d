import { plainToInstance } from 'class-transformer';
import { IsIn, IsInt, Max, Min, validateSync } from 'class-validator';

/** A configuration mistake: `problems` holds one sentence per bad variable, each naming it. */
/**
 * One part of the configuration: how it is read from the environment (throwing a
 * ConfigurationError for a bad variable), and the token its module injects it under, when it is a
 * namespace of the config module (none for what is only checked at start).
 */
export interface ConfigurationPart {
  readonly token?: string | symbol;
  readonly load: (env: NodeJS.ProcessEnv) => unknown;
}

export class ConfigurationError extends Error {
  readonly problems: string[];

  constructor(message: string, problems: string[] = [message.replace(/^Invalid configuration:\s*/, '')]) {
    super(message);
    this.problems = problems;
  }
}

/** An integer variable within bounds; one message, naming the variable and the allowed range, whatever is wrong. */
export function IntegerBetween(min: number, max: number): PropertyDecorator {
  return (target, property) => {
    const message = `${String(property)} must be an integer from ${min} to ${max}`;
    for (const decorate of [IsInt({ message }), Min(min, { message }), Max(max, { message })]) {
      decorate(target, property);
    }
  };
}

/** One of a fixed set of words, listed in the message. */
export function OneOf(values: readonly string[]): PropertyDecorator {
  return (target, property) =>
    IsIn(values, { message: `${String(property)} must be one of ${values.join(', ')}` })(target, property);
}

/** Validates the environment variables one namespace reads; the error names every bad variable. */
export function validateEnv<T extends object>(schema: new () => T, env: NodeJS.ProcessEnv): T {
  const values = plainToInstance(schema, emptyToUndefined(env), {
    enableImplicitConversion: true,
  });
  const errors = validateSync(values, { skipMissingProperties: false });
  if (errors.length > 0) {
    // Several constraints of one variable share a message (IntegerBetween): say it once.
    const problems = errors.map((e) => [...new Set(Object.values(e.constraints ?? {}))].join('; '));
    const lines = errors.map((e, i) => `  - ${e.property}: ${problems[i]}`);
    throw new ConfigurationError(`Invalid configuration:\n${lines.join('\n')}`, problems);
  }
  return values;
}

/** `FOO=` in a compose file means "not set", not "set to the empty string". */
function emptyToUndefined(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== ''),
  );
}

export function requireAll(namespace: string, env: Record<string, unknown>, names: string[]): void {
  const missing = names.filter((name) => env[name] === undefined);
  if (missing.length > 0) {
    throw new ConfigurationError(
      `Invalid configuration: ${namespace} is partly configured; missing ${missing.join(', ')} ` +
        `(set them all, or none to disable ${namespace})`,
    );
  }
}
