import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

export class ConfigurationError extends Error {}

/** Validates the environment variables one namespace reads; the error names every bad variable. */
export function validateEnv<T extends object>(schema: new () => T, env: NodeJS.ProcessEnv): T {
  const values = plainToInstance(schema, emptyToUndefined(env), {
    enableImplicitConversion: true,
  });
  const errors = validateSync(values, { skipMissingProperties: false });
  if (errors.length > 0) {
    const lines = errors.flatMap((e) => Object.values(e.constraints ?? {}).map((msg) => `  - ${e.property}: ${msg}`));
    throw new ConfigurationError(`Invalid configuration:\n${lines.join('\n')}`);
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
