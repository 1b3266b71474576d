import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { DataSource } from 'typeorm';
import { isDuplicateKey, isDuplicateKeyOn, WriteResult } from '../../platform/database/sql';
import { MerchantAction, MerchantChange, MerchantDecision, PROPOSALS } from './merchant-change.entity';

export type NewMerchantChange = Pick<MerchantChange, 'channel' | 'accountId' | 'subMerchantId' | 'action'> &
  Partial<
    Pick<
      MerchantChange,
      | 'subAppId'
      | 'reason'
      | 'keyKind'
      | 'keyId'
      | 'candidatePem'
      | 'candidateFingerprint'
      | 'overlapSeconds'
      | 'secretId'
      | 'accountFacts'
    >
  > & { operatorId: string };

/** What a decision on a proposal came to: written, or why not. */
export type Decision = 'DECIDED' | 'ALREADY_DECIDED' | 'NOT_DECIDABLE';

/** merchant_change: appended to, never updated or deleted. */
@Injectable()
export class MerchantChangeRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly db: DataSource,
  ) {}

  private get repo() {
    return this.txHost.tx.getRepository(MerchantChange);
  }

  /** The directory's version: the last change's id ('0' before any). Read outside any transaction, by the poll. */
  async version(): Promise<string> {
    const [row]: Array<{ v: string | null }> = await this.db.query('SELECT MAX(id) AS v FROM merchant_change');
    return String(row?.v ?? '0');
  }

  /** Every change, in the order they happened. */
  async all(): Promise<MerchantChange[]> {
    return this.db.getRepository(MerchantChange).find({ order: { id: 'ASC' } });
  }

  /** The row that decided a proposal, if any. */
  async decisionOf(changeId: string): Promise<MerchantChange | null> {
    return this.repo.findOneBy({ decidesChangeId: changeId });
  }

  async findById(id: string): Promise<MerchantChange | null> {
    return this.repo.findOneBy({ id });
  }

  async append(change: NewMerchantChange): Promise<MerchantChange> {
    const row = {
      subAppId: null,
      reason: null,
      decidesChangeId: null,
      keyKind: null,
      keyId: null,
      candidatePem: null,
      candidateFingerprint: null,
      overlapSeconds: null,
      secretId: null,
      accountFacts: null,
      createdAt: new Date(),
      ...change,
    };
    const { identifiers } = await this.repo.insert(row);
    return { ...row, id: String(identifiers[0].id) };
  }

  /**
   * Claims what an ACCOUNT_ADDED or SUB_MERCHANT_ADDED row adds (its channel, account and
   * sub-merchant, '' for the account itself) for that row, in its transaction: false when it was
   * added before, by a row committed already or by one committing now on any replica (the insert
   * waits for that one). Then the caller's transaction must roll back, change row included.
   */
  async claimAdded(change: Pick<MerchantChange, 'id' | 'channel' | 'accountId' | 'subMerchantId'>): Promise<boolean> {
    try {
      await this.txHost.tx.query(
        'INSERT INTO merchant_added (channel, account_id, sub_merchant_id, change_id) VALUES (?, ?, ?, ?)',
        [change.channel, change.accountId, change.subMerchantId, change.id],
      );
      return true;
    } catch (error) {
      if (isDuplicateKeyOn(error, 'PRIMARY')) return false;
      throw error;
    }
  }

  /**
   * Whether a dry run of the candidate (its fingerprint) for the account's key file of `kind` was
   * recorded since `since`.
   */
  async dryRunSince(
    target: { channel: string; account: string; kind: string; fingerprint: string },
    since: Date,
  ): Promise<boolean> {
    const found = await this.repo
      .createQueryBuilder('c')
      .where('c.candidate_fingerprint = :fingerprint AND c.action = :action', {
        fingerprint: target.fingerprint,
        action: MerchantAction.KeyDryRun,
      })
      .andWhere('c.channel = :channel AND c.account_id = :account AND c.key_kind = :kind', target)
      .andWhere('c.created_at >= :since', { since })
      .getCount();
    return found > 0;
  }

  /**
   * Decides a proposal (DISABLE_PROPOSED, PLATFORM_KEY_PROPOSED) in one conditional insert: APPROVED only by another operator
   * than the proposer, REJECTED by anyone. The unique key on decides_change_id lets one decision of
   * several concurrent ones through.
   */
  async decide(changeId: string, action: MerchantDecision, operatorId: string, reason?: string): Promise<Decision> {
    const otherOperator = action === MerchantAction.Approved ? 'AND operator_id <> ?' : '';
    try {
      const result: WriteResult = await this.txHost.tx.query(
        `INSERT INTO merchant_change (channel, account_id, sub_merchant_id, action, sub_app_id, decides_change_id, operator_id, reason, created_at)
         SELECT channel, account_id, sub_merchant_id, ?, NULL, id, ?, ?, ? FROM merchant_change
         WHERE id = ? AND action IN (?) ${otherOperator}`,
        [
          action,
          operatorId,
          reason ?? null,
          // The app's clock, as every timestamp (a platform key's overlap window starts then), not the server's zone.
          new Date(),
          changeId,
          PROPOSALS,
          ...(otherOperator ? [operatorId] : []),
        ],
      );
      return result.affectedRows === 1 ? 'DECIDED' : 'NOT_DECIDABLE';
    } catch (error) {
      if (isDuplicateKey(error)) return 'ALREADY_DECIDED';
      throw error;
    }
  }

  /** The history, newest first, at most `limit` rows before `beforeId`. */
  async history(limit: number, beforeId?: string): Promise<MerchantChange[]> {
    const query = this.repo.createQueryBuilder('c').orderBy('c.id', 'DESC').limit(limit);
    if (beforeId) query.where('c.id < :beforeId', { beforeId });
    return query.getMany();
  }
}
