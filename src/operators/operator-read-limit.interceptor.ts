import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { FastifyRequest } from 'fastify';
import { finalize, Observable } from 'rxjs';
import { adminConfig } from './admin.config';
import { DomainError } from '../domain/domain-error';
import { AuthenticatedOperator } from './admin-auth.guard';

/**
 * At most ADMIN_READS_PER_OPERATOR reads of one operator at a time; one more is refused with 429
 * at once rather than queued, so that a single token (a viewer's, a dashboard gone wild) cannot
 * fill the reporting pool for everyone. Runs after AdminAuthGuard, which names the operator.
 */
@Injectable()
export class OperatorReadLimit implements NestInterceptor {
  private readonly inFlight = new Map<string, number>();

  constructor(@Inject(adminConfig.KEY) private readonly config: ConfigType<typeof adminConfig>) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { operator?: AuthenticatedOperator }>();
    const operatorId = request.operator!.operatorId;
    const running = this.inFlight.get(operatorId) ?? 0;
    if (running >= this.config.readsPerOperator) {
      throw new DomainError(
        'TooManyReads',
        `operator ${operatorId} has ${running} reads running (ADMIN_READS_PER_OPERATOR); retry when one has finished`,
      );
    }
    this.inFlight.set(operatorId, running + 1);
    return next.handle().pipe(finalize(() => this.finished(operatorId)));
  }

  private finished(operatorId: string): void {
    const running = (this.inFlight.get(operatorId) ?? 1) - 1;
    if (running === 0) this.inFlight.delete(operatorId);
    else this.inFlight.set(operatorId, running);
  }
}
