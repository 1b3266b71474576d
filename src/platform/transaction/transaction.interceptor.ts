import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { defer, lastValueFrom, Observable } from 'rxjs';
import { TransactionRunner } from './transaction.runner';

/**
 * Runs the whole handler in ONE database transaction (TransactionRunner). The response is written
 * only after the observable completes, i.e. after COMMIT: a platform is never acked for work that
 * could still roll back.
 */
@Injectable()
export class TransactionInterceptor implements NestInterceptor {
  constructor(private readonly transactions: TransactionRunner) {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return defer(() => this.transactions.run(() => lastValueFrom(next.handle(), { defaultValue: undefined })));
  }
}
