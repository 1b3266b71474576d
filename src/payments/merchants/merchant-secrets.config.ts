import { readFileSync } from 'node:fs';
import { registerAs } from '@nestjs/config';
import { IsOptional } from 'class-validator';
import { SingleValue } from '../../channels/single-value';
import { ConfigurationError, validateEnv } from '../../platform/config/env-validation';
import { parseKeyRing, SecretKeyRing } from './secret-sealing';

export const MERCHANT_SECRETS_KEYS_FILE = 'MERCHANT_SECRETS_KEYS_FILE';

class MerchantSecretsEnv {
  @IsOptional()
  @SingleValue()
  MERCHANT_SECRETS_KEYS_FILE?: string;
}

/** Where the keys that encrypt the directory's secrets live; unset: no account can be added through the directory. */
export interface MerchantSecretsConfig {
  keysFile?: string;
}

/** The file is read at start too: a file that is missing or malformed is a start error naming it (never a key). */
export function loadMerchantSecretsConfig(env: NodeJS.ProcessEnv = process.env): MerchantSecretsConfig {
  const keysFile = validateEnv(MerchantSecretsEnv, env).MERCHANT_SECRETS_KEYS_FILE?.trim();
  if (!keysFile) return {};
  readKeyRing(keysFile);
  return { keysFile };
}

/** MERCHANT_SECRETS_KEYS_FILE's keys: the first line encrypts, every line decrypts. */
export function readKeyRing(path: string): SecretKeyRing {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError(
      `Invalid configuration: ${MERCHANT_SECRETS_KEYS_FILE} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseKeyRing(text, `${MERCHANT_SECRETS_KEYS_FILE} ${path}`);
}

export const merchantSecretsConfig = registerAs('merchantSecrets', () => loadMerchantSecretsConfig());
