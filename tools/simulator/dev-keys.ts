/**
 * The local development key set `simulate init` writes: the tokens, and each channel's keys (both sides of every
 * key pair: the platforms' signing keys stay with the simulator, their public halves and the merchant's private keys
 * go to the service), with a description the other commands load. Each channel adds its part of the description to
 * DevKeys from its own folder (wechatpay/wechatpay-dev-keys.ts …). Never for production: the keys are made on this
 * machine for it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from './cli';
import { randomAlphanumeric } from './signing';

const DESCRIPTION_FILE = 'keys.json';

/** The key set as keys.json describes it; each channel's part (under its name) is declared in its folder. */
export interface DevKeys {
  dir: string;
  platformPort: number;
  internalApiToken: string;
  /** Two admins, so that one can approve the other's refund (four eyes). */
  admins: Array<{ id: string; token: string }>;
}

export function keysExist(dir: string): boolean {
  return existsSync(join(dir, DESCRIPTION_FILE));
}

/**
 * Generates a new key set into `dir` (created if missing), files readable by the owner only: the tokens here, and
 * every channel's keys by `channelKeys`, which answers their parts of keys.json.
 */
export async function createDevKeys(
  dir: string,
  platformPort: number,
  channelKeys: (dir: string) => Promise<Record<string, object>>,
): Promise<DevKeys> {
  const absolute = resolve(dir);
  mkdirSync(absolute, { recursive: true, mode: 0o700 });
  const common = {
    platformPort,
    internalApiToken: randomAlphanumeric(40),
    admins: [
      { id: 'alice', token: randomAlphanumeric(40) },
      { id: 'bob', token: randomAlphanumeric(40) },
    ],
  };
  const description = { ...common, ...(await channelKeys(absolute)) };
  writeSecret(join(absolute, DESCRIPTION_FILE), `${JSON.stringify(description, null, 2)}\n`);
  return { ...description, dir: absolute } as DevKeys;
}

export function loadDevKeys(dir: string): DevKeys {
  const absolute = resolve(dir);
  if (!keysExist(absolute)) {
    throw new UsageError(`no key set in ${absolute}: run \`npm run simulate -- init\` first (or pass --keys DIR)`);
  }
  const description = JSON.parse(readFileSync(join(absolute, DESCRIPTION_FILE), 'utf8')) as Omit<DevKeys, 'dir'>;
  return { ...description, dir: absolute };
}

/** The service's variables of the key set's tokens (each channel gives its own). */
export function tokenEnvironment(keys: DevKeys): Record<string, string> {
  return {
    INTERNAL_API_TOKEN: keys.internalApiToken,
    ADMIN_TOKENS: keys.admins.map((admin) => `${admin.id}:${admin.token}:admin`).join(','),
  };
}

/** `.env.local`: KEY="value" lines that both `node --env-file` and `set -a; . ./.env.local` read. */
export function envFileText(keys: DevKeys, environment: Record<string, string>): string {
  const lines = Object.entries(environment).map(([name, value]) => `${name}="${value}"`);
  return [
    `# Written by \`npm run simulate -- init\` on ${new Date().toISOString()}: a local development key set from`,
    `# ${keys.dir}. Never for production. Start the service with it: npm run start:local`,
    ...lines,
    '',
  ].join('\n');
}

export function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
}
