import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The secret part of an account added through the merchant directory (its accounts-file entry and
 * its key files' content, as one JSON document), sealed with AES-256-GCM under a key of
 * MERCHANT_SECRETS_KEYS_FILE (key_id), bound to the channel and account of the merchant_change row
 * that names it (secret_id). Written once; only a rewrap (a new key) updates it, each row under a
 * compare-and-set on its key_id.
 */
@Entity('merchant_secret')
@Index('ix_merchant_secret_key_id', ['keyId'])
export class MerchantSecret {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'key_id', type: 'varchar', length: 32 })
  keyId: string;

  @Column({ type: 'binary', length: 12 })
  iv: Buffer;

  @Column({ type: 'mediumblob' })
  ciphertext: Buffer;

  @Column({ type: 'binary', length: 16 })
  tag: Buffer;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
