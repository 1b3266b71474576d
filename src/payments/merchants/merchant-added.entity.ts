import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * What the merchant directory added, once each: an account (sub_merchant_id '') or a service
 * provider's sub-merchant, with the ACCOUNT_ADDED or SUB_MERCHANT_ADDED row of merchant_change that
 * added it. Inserted in that row's transaction: of two adds of the same one at once, on any replica,
 * the primary key lets one commit and the other roll back. Identifiers are binary, as the directory
 * compares them.
 */
@Entity('merchant_added')
export class MerchantAdded {
  @PrimaryColumn({ type: 'varchar', length: 16 })
  channel: string;

  @PrimaryColumn({ name: 'account_id', type: 'varchar', length: 64 })
  accountId: string;

  /** '' for the account itself. */
  @PrimaryColumn({ name: 'sub_merchant_id', type: 'varchar', length: 64 })
  subMerchantId: string;

  /** The merchant_change row that added it. */
  @Column({ name: 'change_id', type: 'bigint' })
  changeId: string;
}
