import { parseCommand, print } from './cli';
import { loadDevKeys } from './dev-keys';

export const TOKENS_USAGE = 'tokens [--shell]';

/**
 * The bearer tokens of the key set: the order API's and each admin's, rather than cut out of ADMIN_TOKENS, and the
 * service's URL (`.env.local`'s PORT, or --target). With --shell, as `NAME=value` lines for
 * `eval "$(npm run -s simulate -- tokens --shell)"`.
 */
export function tokens(args: string[]): number {
  const { values } = parseCommand(args, { shell: { type: 'boolean', default: false } });
  const keys = loadDevKeys(values.keys);
  const named = [
    ['INTERNAL_API_TOKEN', keys.internalApiToken, 'the order API (POST /payment-orders)'],
    ...keys.admins.map((admin) => [`${admin.id.toUpperCase()}_TOKEN`, admin.token, `admin ${admin.id}`]),
  ];
  for (const [name, token, what] of named) print(values.shell ? `${name}=${token}` : `${what.padEnd(38)} ${token}`);
  // The service the other commands send to: README's curl lines use it, so they follow init --port.
  print(values.shell ? `SERVICE_URL=${values.target}` : `${'the service'.padEnd(38)} ${values.target}`);
  return 0;
}
