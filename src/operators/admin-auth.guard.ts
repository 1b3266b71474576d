import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { AdminRole } from './admin.config';
import { AuditLog } from './audit/audit-log';
import { auditedWriteOf, recordRefusal } from './audit/audited-write';
import { KnownOperator, OperatorDirectory } from './operator-directory';

const ROLE_KEY = 'admin-role';

export interface AuthenticatedOperator {
  operatorId: string;
  role: AdminRole;
}

type AdminRequest = FastifyRequest & { operator?: AuthenticatedOperator };

/**
 * Bearer tokens from ADMIN_TOKENS and ADMIN_TOKENS_FILE (OperatorDirectory). The presented token is
 * hashed and compared in constant time with every operator's (no early exit), so neither a token's
 * bytes nor which operator matched leak through timing. 401 without a valid token, 403 for a viewer
 * calling an admin action.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    private readonly directory: OperatorDirectory,
    private readonly reflector: Reflector,
    private readonly audit: AuditLog,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.directory.configured) {
      throw new DomainError('FeatureDisabled', 'the admin API is disabled: ADMIN_TOKENS is not configured');
    }
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const operator = this.authenticate(request.headers.authorization, await this.directory.current());
    if (!operator) throw new DomainError('Unauthenticated', 'a valid Authorization: Bearer admin token is required');
    const required = this.reflector.get<AdminRole>(ROLE_KEY, context.getHandler());
    if (required === AdminRole.Admin && operator.role !== AdminRole.Admin) {
      const refusal = new DomainError(
        'Forbidden',
        `operator ${operator.operatorId} has role viewer; this action needs admin`,
      );
      const audited = auditedWriteOf(this.reflector, context);
      if (audited) await recordRefusal(this.audit, audited, request, operator.operatorId, refusal);
      throw refusal;
    }
    request.operator = { operatorId: operator.operatorId, role: operator.role };
    return true;
  }

  private authenticate(
    header: string | undefined,
    operators: readonly KnownOperator[],
  ): AuthenticatedOperator | undefined {
    const token = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
    if (!token) return undefined;
    const presented = createHash('sha256').update(token).digest();
    let found: AuthenticatedOperator | undefined;
    for (const operator of operators) {
      if (timingSafeEqual(presented, operator.digest)) found = operator;
    }
    return found;
  }
}

/** Route decorator: needs an admin token; `viewer` routes accept both roles, `admin` routes only admins. */
export const AdminAccess = (role: AdminRole) => applyDecorators(SetMetadata(ROLE_KEY, role), UseGuards(AdminAuthGuard));

/** Handler parameter: the operator AdminAuthGuard authenticated. */
export const CurrentOperator = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<AdminRequest>().operator!,
);
