import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  HttpException,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FastifyRequest } from 'fastify';
import { catchError, from, Observable, switchMap, throwError } from 'rxjs';
import { DomainError } from '../../domain/domain-error';
import { httpErrorCode } from '../../platform/http/error-answer';
import { AuditLog } from './audit-log';

const AUDITED_KEY = 'audited-write';

/** An admin write: what its audit rows call it, and the target a request names. */
export interface AuditedWriteSpec {
  action: string;
  target(request: FastifyRequest): string;
  /** What a refusal's row keeps of the body, where the body holds secrets; the body itself unless told. */
  requestBody?(request: FastifyRequest): unknown;
}

/**
 * Route decorator of every admin write: its refusal (a 4xx: the role check's 403, a malformed
 * body's 400, the use case's own) is audited as `<action>_REFUSED`, in a transaction of its own.
 * What it did is audited by its use case, in the change's transaction. A test lists every admin
 * write route and fails on one without it.
 */
export const AuditedWrite = (
  action: string,
  target: (request: FastifyRequest) => string,
  requestBody?: (request: FastifyRequest) => unknown,
) =>
  applyDecorators(
    SetMetadata(AUDITED_KEY, { action, target, requestBody } satisfies AuditedWriteSpec),
    UseInterceptors(AuditRefusals),
  );

export function auditedWriteOf(reflector: Reflector, context: ExecutionContext): AuditedWriteSpec | undefined {
  return reflector.get<AuditedWriteSpec>(AUDITED_KEY, context.getHandler());
}

/** A refused write's row, in a transaction of its own: the operator, the target, the action refused and why (status, code, message). */
export function recordRefusal(
  audit: AuditLog,
  spec: AuditedWriteSpec,
  request: FastifyRequest,
  operatorId: string,
  error: DomainError | HttpException,
): Promise<void> {
  const status = error instanceof DomainError ? error.status : error.getStatus();
  const code = error instanceof DomainError ? error.code : httpErrorCode(status);
  return audit.recordAlone({
    operatorId,
    action: `${spec.action}_REFUSED`,
    target: spec.target(request),
    requestBody: spec.requestBody ? spec.requestBody(request) : (request.body ?? null),
    result: { refused: { status, code, reason: error.message } },
  });
}

/**
 * On every audited write (put there by @AuditedWrite): when the write is refused (a 4xx), its use
 * case's transaction has rolled back, and this records the attempt in a transaction of its own,
 * then lets the refusal through.
 */
@Injectable()
export class AuditRefusals implements NestInterceptor {
  constructor(
    private readonly audit: AuditLog,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec = auditedWriteOf(this.reflector, context);
    const request = context.switchToHttp().getRequest<FastifyRequest & { operator?: { operatorId: string } }>();
    return next.handle().pipe(
      catchError((error: unknown) => {
        const operatorId = request.operator?.operatorId;
        if (!spec || !operatorId || !isClientRefusal(error)) return throwError(() => error);
        return from(recordRefusal(this.audit, spec, request, operatorId, error)).pipe(
          switchMap(() => throwError(() => error)),
        );
      }),
    );
  }
}

function isClientRefusal(error: unknown): error is DomainError | HttpException {
  const status =
    error instanceof DomainError ? error.status : error instanceof HttpException ? error.getStatus() : undefined;
  return status !== undefined && status >= 400 && status < 500;
}
