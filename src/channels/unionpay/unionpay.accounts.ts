import { IsOptional, IsString, Matches } from 'class-validator';
import { AccountsSection } from '../accounts-file';
import type { UnionpayAccount } from './unionpay.config';

class UnionpayAccountEntry {
  @Matches(/^[0-9A-Za-z]{15}$/, { message: '$property must be 15 letters or digits' })
  merId: string;

  @IsOptional()
  @IsString()
  signCertPath?: string;

  @IsOptional()
  @IsString()
  signCertPassword?: string;
}

/** The "unionpay" list of PAYMENT_ACCOUNTS_FILE: one entry per merchant (merId), with its signing PFX. */
export const unionpayAccounts: AccountsSection<UnionpayAccountEntry, UnionpayAccount> = {
  key: 'unionpay',
  schema: UnionpayAccountEntry,
  idField: 'merId',
  toAccount: (entry) => ({
    merId: entry.merId,
    signCert:
      entry.signCertPath === undefined
        ? undefined
        : { path: entry.signCertPath, password: entry.signCertPassword ?? '' },
  }),
};
