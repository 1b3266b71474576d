import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { createHash, timingSafeEqual } from 'node:crypto';
import { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { serverConfig } from '../platform/config/server.config';

/** `Authorization: Bearer $INTERNAL_API_TOKEN`, compared in constant time. */
@Injectable()
export class InternalApiGuard implements CanActivate {
  private readonly expectedDigest?: Buffer;

  /** Nest makes one guard per controller that uses it: the warning that the API is off is OrderModule's, said once. */
  constructor(@Inject(serverConfig.KEY) config: ConfigType<typeof serverConfig>) {
    if (config.internalApiToken) this.expectedDigest = digest(config.internalApiToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expectedDigest) {
      throw new DomainError('FeatureDisabled', 'the order API is disabled: INTERNAL_API_TOKEN is not configured');
    }
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '';
    const token = /^Bearer (.+)$/.exec(header)?.[1];
    // Hashing first makes the comparison constant-time whatever the presented token's length.
    if (!token || !timingSafeEqual(digest(token), this.expectedDigest)) {
      throw new DomainError('Unauthenticated', 'a valid Authorization: Bearer token is required');
    }
    return true;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
