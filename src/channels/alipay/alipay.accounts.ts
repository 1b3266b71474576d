import { IsOptional, IsString, Matches } from 'class-validator';
import { AccountsSection } from '../accounts-file';
import type { AlipayAccount } from './alipay.config';

class AlipayAccountEntry {
  @Matches(/^\d+$/, { message: '$property must be digits' })
  appId: string;

  @IsOptional()
  @Matches(/^\d+$/, { message: '$property must be digits' })
  sellerId?: string;

  @IsString()
  alipayPublicKeyPath: string;

  @IsOptional()
  @IsString()
  appPrivateKeyPath?: string;
}

/** The "alipay" list of PAYMENT_ACCOUNTS_FILE: one entry per app id. */
export const alipayAccounts: AccountsSection<AlipayAccountEntry, AlipayAccount> = {
  key: 'alipay',
  schema: AlipayAccountEntry,
  idField: 'appId',
  toAccount: (entry) => ({
    appId: entry.appId,
    sellerId: entry.sellerId,
    publicKeyPath: entry.alipayPublicKeyPath,
    appPrivateKeyPath: entry.appPrivateKeyPath,
  }),
};
