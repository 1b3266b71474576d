import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, tap } from 'rxjs';
import { RefundStatus } from '../refund/refund.entity';
import { RefundExecutor } from '../refund/refund-executor';
import { RefundView } from './dto/admin-views';

/**
 * Sits outside TransactionInterceptor, so it sees the refund only once it has committed: the
 * channel is never asked to refund what could still roll back.
 */
@Injectable()
export class StartRefundAfterCommit implements NestInterceptor {
  constructor(private readonly executor: RefundExecutor) {}

  intercept(_context: ExecutionContext, next: CallHandler<RefundView>): Observable<RefundView> {
    return next.handle().pipe(
      tap((refund) => {
        if (refund.status === RefundStatus.Pending) this.executor.start(refund.refundNo);
      }),
    );
  }
}
