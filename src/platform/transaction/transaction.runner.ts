import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { QueryFailedError } from 'typeorm';

/** Lock conflicts that InnoDB resolves by aborting one side; the aborted side can simply run again. */
const RETRYABLE_ERRNOS = new Set([1213 /* ER_LOCK_DEADLOCK */, 1205 /* ER_LOCK_WAIT_TIMEOUT */]);
const MAX_ATTEMPTS = 3;

/**
 * Runs work in ONE database transaction, propagated to every repository through nestjs-cls, and
 * runs it again (twice at most) when InnoDB aborted it for a lock conflict.
 */
@Injectable()
export class TransactionRunner {
  private readonly logger = new Logger(TransactionRunner.name);

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.txHost.withTransaction(work);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isRetryableLockConflict(error)) throw error;
        this.logger.warn(`lock conflict (${(error as Error).message}); retrying, attempt ${attempt + 1}`);
      }
    }
  }
}

/** A deadlock or lock wait timeout: InnoDB rolled the transaction back, and running it again may succeed. */
export function isRetryableLockConflict(error: unknown): boolean {
  return (
    error instanceof QueryFailedError && RETRYABLE_ERRNOS.has((error.driverError as { errno?: number }).errno ?? 0)
  );
}
