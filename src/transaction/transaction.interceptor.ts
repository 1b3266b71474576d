import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { defer, lastValueFrom, Observable } from 'rxjs';
import { QueryFailedError } from 'typeorm';

/** Lock conflicts that InnoDB resolves by aborting one side; the aborted side can simply run again. */
const RETRYABLE_ERRNOS = new Set([1213 /* ER_LOCK_DEADLOCK */, 1205 /* ER_LOCK_WAIT_TIMEOUT */]);
const MAX_ATTEMPTS = 3;

/**
 * Runs the whole handler in ONE database transaction, propagated to every repository through
 * nestjs-cls. The response is written only after the observable completes, i.e. after COMMIT:
 * a platform is never acked for work that could still roll back.
 */
@Injectable()
export class TransactionInterceptor implements NestInterceptor {
  private readonly logger = new Logger(TransactionInterceptor.name);

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return defer(() => this.runWithRetry(() => lastValueFrom(next.handle(), { defaultValue: undefined })));
  }

  private async runWithRetry<T>(handler: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.txHost.withTransaction(handler);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isRetryableLockConflict(error)) throw error;
        this.logger.warn(`lock conflict (${(error as Error).message}); retrying, attempt ${attempt + 1}`);
      }
    }
  }
}

function isRetryableLockConflict(error: unknown): boolean {
  return (
    error instanceof QueryFailedError && RETRYABLE_ERRNOS.has((error.driverError as { errno?: number }).errno ?? 0)
  );
}
