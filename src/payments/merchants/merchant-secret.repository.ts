import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { DataSource, In } from 'typeorm';
import { WriteResult } from '../../platform/database/sql';
import { MerchantSecret } from './merchant-secret.entity';
import { SealedSecret } from './secret-sealing';

/** A sealed secret with the account it is bound to (its merchant_change row's). */
export interface BoundSecret extends SealedSecret {
  id: string;
  channel: string;
  accountId: string;
}

/** merchant_secret: inserted with its change row; updated only by a rewrap, under a compare-and-set on key_id. */
@Injectable()
export class MerchantSecretRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly db: DataSource,
  ) {}

  async insert(sealed: SealedSecret): Promise<string> {
    const { identifiers } = await this.txHost.tx
      .getRepository(MerchantSecret)
      .insert({ ...sealed, createdAt: new Date() });
    return String(identifiers[0].id);
  }

  /** The secrets by id, read outside any transaction (the directory's poll). */
  async byIds(ids: readonly string[]): Promise<Map<string, SealedSecret>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.getRepository(MerchantSecret).findBy({ id: In([...ids]) });
    return new Map(rows.map((r) => [String(r.id), { keyId: r.keyId, iv: r.iv, ciphertext: r.ciphertext, tag: r.tag }]));
  }

  /** Every secret not sealed under `keyId`, with the account its change row binds it to. */
  async notUnder(keyId: string): Promise<BoundSecret[]> {
    const rows: Array<{
      id: string;
      key_id: string;
      iv: Buffer;
      ciphertext: Buffer;
      tag: Buffer;
      channel: string;
      account_id: string;
    }> = await this.txHost.tx.query(
      `SELECT s.id, s.key_id, s.iv, s.ciphertext, s.tag, c.channel, c.account_id
       FROM merchant_secret s JOIN merchant_change c ON c.secret_id = s.id
       WHERE s.key_id <> ? ORDER BY s.id`,
      [keyId],
    );
    return rows.map((r) => ({
      id: String(r.id),
      keyId: r.key_id,
      iv: r.iv,
      ciphertext: r.ciphertext,
      tag: r.tag,
      channel: r.channel,
      accountId: r.account_id,
    }));
  }

  /** Replaces the sealed secret only if it is still under `fromKeyId`: of two rewraps at once, one writes each row. */
  async replaceIfUnder(id: string, fromKeyId: string, sealed: SealedSecret): Promise<boolean> {
    const result: WriteResult = await this.txHost.tx.query(
      'UPDATE merchant_secret SET key_id = ?, iv = ?, ciphertext = ?, tag = ? WHERE id = ? AND key_id = ?',
      [sealed.keyId, sealed.iv, sealed.ciphertext, sealed.tag, id, fromKeyId],
    );
    return result.affectedRows === 1;
  }
}
