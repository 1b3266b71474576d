import { FastifyRequest } from 'fastify';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../operators/admin-auth.guard';
import { AuditLog } from '../operators/audit/audit-log';
import { AuditedWrite } from '../operators/audit/audited-write';
import { OperatorReadLimit } from '../operators/operator-read-limit.interceptor';
import { AdminRole } from '../operators/admin.config';
import { ApiErrors } from '../platform/http/error.view';
import {
  AttemptQueryDto,
  CreateWebhookEndpointDto,
  RecoverDto,
  RecoverView,
  ResendDto,
  ResendView,
  UpdateWebhookEndpointDto,
  WebhookAttemptPageView,
  WebhookEndpointSecretView,
  WebhookEndpointView,
} from '../events/webhooks/dto/webhook-endpoint.dto';
import { WebhookEndpoints } from '../events/webhooks/webhook-endpoints.service';

/**
 * Webhook endpoints: viewers read, admins write; every write is its use case's (WebhookEndpoints),
 * in one transaction with its audit row, and a refused write is audited too. The signing secret is
 * answered at creation and rotation only, and never audited.
 */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(
    private readonly endpoints: WebhookEndpoints,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Register a webhook endpoint; answers its signing secret, once (admin)' })
  @ApiCreatedResponse({ type: WebhookEndpointSecretView })
  @ApiErrors([400, 'a malformed body, or a URL that is not https:// or names a private address'], [403, 'a viewer'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('WEBHOOK_ENDPOINT_CREATE', createdTarget)
  create(
    @Body() dto: CreateWebhookEndpointDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<WebhookEndpointSecretView> {
    return this.endpoints.create(dto, (created) =>
      this.record(operator, 'WEBHOOK_ENDPOINT_CREATED', created.id, dto, withoutSecret(created)),
    );
  }

  @Get()
  @ApiOperation({ summary: 'The webhook endpoints, without their secrets (viewer)' })
  @ApiOkResponse({ type: [WebhookEndpointView] })
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  list(): Promise<WebhookEndpointView[]> {
    return this.endpoints.list();
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Enable or disable an endpoint, or change its event types or description (admin)' })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiErrors([400, 'a malformed body'], [403, 'a viewer'], [404, 'unknown endpoint'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('WEBHOOK_ENDPOINT_UPDATE', endpointTarget)
  update(
    @Param('id') id: string,
    @Body() dto: UpdateWebhookEndpointDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<WebhookEndpointView> {
    return this.endpoints.update(id, dto, (updated) =>
      this.record(operator, 'WEBHOOK_ENDPOINT_UPDATED', id, dto, updated),
    );
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    summary: 'A new signing secret, answered once; the old one keeps signing beside it for 24 h (admin)',
  })
  @ApiOkResponse({ type: WebhookEndpointSecretView })
  @ApiErrors([403, 'a viewer'], [404, 'unknown endpoint'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('WEBHOOK_SECRET_ROTATE', endpointTarget)
  rotateSecret(
    @Param('id') id: string,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<WebhookEndpointSecretView> {
    return this.endpoints.rotateSecret(id, (rotated) =>
      this.record(operator, 'WEBHOOK_SECRET_ROTATED', id, null, withoutSecret(rotated)),
    );
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete an endpoint with its deliveries and attempts (admin)' })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiErrors([403, 'a viewer'], [404, 'unknown endpoint'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('WEBHOOK_ENDPOINT_DELETE', endpointTarget)
  remove(@Param('id') id: string, @CurrentOperator() operator: AuthenticatedOperator): Promise<WebhookEndpointView> {
    return this.endpoints.remove(id, (removed) => this.record(operator, 'WEBHOOK_ENDPOINT_DELETED', id, null, removed));
  }

  @Get(':id/attempts')
  @ApiOperation({ summary: "An endpoint's attempts, newest first; filter by event, order, status and time (viewer)" })
  @ApiOkResponse({ type: WebhookAttemptPageView })
  @ApiErrors([400, 'a malformed filter'], [404, 'unknown endpoint'])
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  attempts(@Param('id') id: string, @Query() query: AttemptQueryDto): Promise<WebhookAttemptPageView> {
    return this.endpoints.attempts(id, query);
  }

  @Post(':id/resend')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send one event to the endpoint again, now (admin)' })
  @ApiOkResponse({ type: ResendView })
  @ApiErrors([403, 'a viewer'], [404, 'unknown endpoint or event'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('WEBHOOK_RESEND', endpointTarget)
  resend(
    @Param('id') id: string,
    @Body() dto: ResendDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<ResendView> {
    return this.endpoints.resend(id, dto.eventId, (resent) => this.record(operator, 'WEBHOOK_RESENT', id, dto, resent));
  }

  @Post(':id/recover')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send again every FAILED message since a time, spread out (admin)' })
  @ApiOkResponse({ type: RecoverView })
  @ApiErrors([400, 'a malformed time'], [403, 'a viewer'], [404, 'unknown endpoint'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('WEBHOOK_RECOVER', endpointTarget)
  recover(
    @Param('id') id: string,
    @Body() dto: RecoverDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RecoverView> {
    return this.endpoints.recover(id, new Date(dto.since), (recovered) =>
      this.record(operator, 'WEBHOOK_RECOVERED', id, dto, recovered),
    );
  }

  private record(
    operator: AuthenticatedOperator,
    action: string,
    id: string,
    requestBody: unknown,
    result: unknown,
  ): Promise<void> {
    return this.audit.record({
      operatorId: operator.operatorId,
      action,
      target: `webhook-endpoint:${id}`,
      requestBody,
      result,
    });
  }
}

function withoutSecret({ secret: _secret, ...view }: WebhookEndpointSecretView): WebhookEndpointView {
  return view;
}

/** A creation's refusal names no endpoint yet: its row's target is the collection. */
function createdTarget(): string {
  return 'webhook-endpoint:new';
}

function endpointTarget(request: FastifyRequest): string {
  return `webhook-endpoint:${(request.params as { id?: string }).id ?? ''}`;
}
