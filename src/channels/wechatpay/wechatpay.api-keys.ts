import { readFileSync } from 'node:fs';
import { ConfigurationError } from '../../platform/config/env-validation';
import type { WechatpayAccount } from './wechatpay.config';

/**
 * The accounts with their APIv3 and APIv2 keys read from their files (apiV3KeyPath, apiV2KeyPath):
 * each file holds the 32-character key, a trailing newline trimmed. Read on every build of the
 * channel, so that a key file rotated on disk takes effect as the other key files do; a file that
 * is missing or holds no 32-character key is a ConfigurationError naming the file and the
 * problem, never its content.
 */
export function withApiKeysRead(accounts: readonly WechatpayAccount[]): WechatpayAccount[] {
  return accounts.map((account) => ({
    ...account,
    ...(account.apiV3KeyPath !== undefined ? { apiV3Key: readApiKey(account, account.apiV3KeyPath, 'APIv3') } : {}),
    ...(account.apiV2KeyPath !== undefined ? { apiV2Key: readApiKey(account, account.apiV2KeyPath, 'APIv2') } : {}),
  }));
}

function readApiKey(account: WechatpayAccount, path: string, api: string): string {
  const where = `the ${api} key file ${path} of account ${account.mchid}`;
  let key: string;
  try {
    key = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigurationError(
      `Invalid configuration: ${where} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (key.length !== 32) {
    throw new ConfigurationError(
      `Invalid configuration: ${where} must hold exactly 32 characters (it holds ${key.length})`,
    );
  }
  return key;
}
