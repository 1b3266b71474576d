import { FastifyRequest } from 'fastify';
import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAccess, AuthenticatedOperator, CurrentOperator } from '../operators/admin-auth.guard';
import { AdminRole } from '../operators/admin.config';
import { AuditLog } from '../operators/audit/audit-log';
import { AuditedWrite } from '../operators/audit/audited-write';
import { OperatorReadLimit } from '../operators/operator-read-limit.interceptor';
import { MerchantChange } from '../payments/merchants/merchant-change.entity';
import { MerchantChanges } from '../payments/merchants/merchant-changes';
import { auditedFactsOf } from '../payments/merchants/directory-accounts';
import { MerchantAccountChanges, RewrapReport } from '../payments/merchants/merchant-account-changes';
import { MerchantDirectory } from '../payments/merchants/merchant-directory';
import { DryRunReport, PlatformKeyDryRun } from '../payments/merchants/platform-key-dry-run';
import { ApiErrors } from '../platform/http/error.view';
import { ReasonDto } from './dto/admin-queries.dto';
import {
  AccountMaterialDto,
  AddSubMerchantDto,
  RewrapReportView,
  RewrapSecretsDto,
  DisableMerchantDto,
  DryRunReportView,
  KeyDryRunDto,
  MerchantChangeView,
  MerchantDirectoryView,
  MerchantHistoryQueryDto,
  MerchantTargetDto,
  ProposePlatformKeyDto,
} from './dto/merchant.dto';

const HISTORY_PAGE = 100;

/**
 * The merchant directory: the accounts of the configuration with the sub-merchants operators add,
 * and what they disable. Viewers read; admins write, each write audited in its own transaction
 * (refusals too). Disabling waits for a second admin's approval, as a large refund does.
 */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors(
  [401, 'missing or unknown operator token (ADMIN_TOKENS)'],
  [503, 'ADMIN_TOKENS is not configured, or the database is unavailable (retry)'],
)
@Controller('admin')
export class MerchantsController {
  constructor(
    private readonly merchants: MerchantChanges,
    private readonly directory: MerchantDirectory,
    private readonly audit: AuditLog,
    private readonly dryRuns: PlatformKeyDryRun,
    private readonly accounts: MerchantAccountChanges,
  ) {}

  @Post('merchants/:channel/accounts')
  @ApiOperation({
    summary:
      "Add an account: one entry of the channel's accounts-file section, its files' content beside it; its secrets are stored encrypted, every replica takes it within a second (admin)",
  })
  @ApiCreatedResponse({ type: MerchantChangeView })
  @ApiErrors(
    [400, "a malformed entry (the accounts file's message naming the field), a file that is no key the channel takes"],
    [403, 'a viewer token'],
    [404, 'unknown channel'],
    [409, 'the account exists (configuration or directory), or MERCHANT_SECRETS_KEYS_FILE is not configured'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_ACCOUNT_ADD', merchantTarget, accountBody)
  addAccount(
    @Param('channel') channel: string,
    @Body() dto: AccountMaterialDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    const material = { entry: dto.entry, files: (dto.files ?? {}) as never };
    return this.accounts.add(channel, material, operator.operatorId, (change) =>
      this.record(operator, 'MERCHANT_ACCOUNT_ADDED', { facts: change.accountFacts }, change),
    );
  }

  @Put('merchants/:channel/:account')
  @HttpCode(202)
  @ApiOperation({
    summary: "Propose to replace a directory account's entry and files (its keys); another admin approves (admin)",
  })
  @ApiCreatedResponse({ type: MerchantChangeView })
  @ApiErrors(
    [400, "a malformed entry, another account's id, a file that is no key the channel takes"],
    [403, 'a viewer token'],
    [404, 'unknown channel or account'],
    [409, 'an account of the configuration (changed there only), or MERCHANT_SECRETS_KEYS_FILE is not configured'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_ACCOUNT_CHANGE', merchantTarget, accountBody)
  proposeAccountChange(
    @Param('channel') channel: string,
    @Param('account') account: string,
    @Body() dto: AccountMaterialDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    const material = { entry: dto.entry, files: (dto.files ?? {}) as never };
    return this.accounts.proposeChange({ channel, account }, material, operator.operatorId, (change) =>
      this.record(operator, 'MERCHANT_ACCOUNT_CHANGE_PROPOSED', { facts: change.accountFacts }, change),
    );
  }

  @Post('merchant-secrets/rewrap')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Seal every secret of the directory under MERCHANT_SECRETS_KEYS_FILE's first key (after a new key was put first) (admin)",
  })
  @ApiOkResponse({ type: RewrapReportView })
  @ApiErrors(
    [400, 'a malformed body'],
    [403, 'a viewer token'],
    [409, 'MERCHANT_SECRETS_KEYS_FILE is not configured, or its first key is not the keyId given'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_SECRETS_REWRAP', () => 'merchant-secrets')
  rewrapSecrets(
    @Body() dto: RewrapSecretsDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<RewrapReport> {
    return this.accounts.rewrap(operator.operatorId, dto.keyId, (report) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'MERCHANT_SECRETS_REWRAPPED',
        target: 'merchant-secrets',
        requestBody: { keyId: dto.keyId ?? null },
        result: report,
      }),
    );
  }

  @Post('merchants/:channel/:account/key-dry-run')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Try a candidate platform key or certificate against the account's recent notifications: how many verify under the current key, the candidate, both (admin)",
  })
  @ApiOkResponse({ type: DryRunReportView })
  @ApiErrors(
    [400, 'a malformed body, or a candidate that is no key or certificate the channel takes'],
    [403, 'a viewer token'],
    [404, 'no such key file of the account'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('PLATFORM_KEY_DRY_RUN', merchantTarget)
  keyDryRun(
    @Param('channel') channel: string,
    @Param('account') account: string,
    @Body() dto: KeyDryRunDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<DryRunReport> {
    const candidate = {
      channel,
      account,
      kind: dto.kind,
      pem: dto.candidatePem,
      since: dto.since ? new Date(dto.since) : undefined,
      operatorId: operator.operatorId,
    };
    return this.dryRuns.run(candidate, (report) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'PLATFORM_KEY_DRY_RUN',
        target: `merchant:${channel}:${account}`,
        // The candidate is public material, but the audit keeps its fingerprint, not its text.
        requestBody: { kind: dto.kind, since: dto.since ?? null, candidateFingerprint: report.candidateFingerprint },
        result: report,
      }),
    );
  }

  @Post('merchants/:channel/:account/platform-keys')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Propose to activate a candidate platform key or certificate tried in a dry run within 24 h; another admin approves, then both keys verify for the overlap window (admin)',
  })
  @ApiCreatedResponse({ type: MerchantChangeView })
  @ApiErrors(
    [400, 'a malformed body, an overlap out of bounds, or a candidate that is no key or certificate the channel takes'],
    [403, 'a viewer token'],
    [404, 'no such key file of the account'],
    [409, 'DryRunRequired: no dry run of this candidate for the account and kind in the last 24 h'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('PLATFORM_KEY_PROPOSE', merchantTarget)
  proposePlatformKey(
    @Param('channel') channel: string,
    @Param('account') account: string,
    @Body() dto: ProposePlatformKeyDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    const proposal = { kind: dto.kind, pem: dto.candidatePem, keyId: dto.keyId, overlapSeconds: dto.overlapSeconds };
    return this.merchants.proposePlatformKey({ channel, account }, proposal, operator.operatorId, (change) =>
      this.audit.record({
        operatorId: operator.operatorId,
        action: 'PLATFORM_KEY_PROPOSED',
        target: `merchant:${channel}:${account}`,
        // The candidate is public material; the audit keeps its fingerprint, the change row its text.
        requestBody: {
          kind: dto.kind,
          keyId: dto.keyId ?? null,
          overlapSeconds: change.overlapSeconds,
          candidateFingerprint: change.candidateFingerprint,
        },
        result: { changeId: change.id, action: change.action },
      }),
    );
  }

  @Get('merchants')
  @ApiOperation({ summary: 'Every account with its sub-merchants, what is disabled, the proposals waiting (viewer)' })
  @ApiOkResponse({ type: MerchantDirectoryView })
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  list(): MerchantDirectoryView {
    const { version, pending, platformKeys } = this.directory.current;
    return {
      version,
      applyWithinMs: MerchantChanges.applyWithinMs,
      accounts: this.merchants.list(),
      pending: [...pending],
      platformKeys: [...platformKeys.values()].map((k) => ({
        channel: k.channel,
        account: k.account,
        kind: k.kind,
        fingerprint: k.fingerprint,
        keyId: k.keyId,
        changeId: k.changeId,
        activatedAt: k.activatedAt.toISOString(),
        overlapUntil: k.overlapUntil.toISOString(),
        previousFingerprint: k.previous?.fingerprint ?? null,
      })),
    };
  }

  @Get('merchant-changes')
  @ApiOperation({ summary: "The directory's history, newest first, 100 a page (viewer)" })
  @ApiOkResponse({ type: [MerchantChangeView] })
  @AdminAccess(AdminRole.Viewer)
  @UseInterceptors(OperatorReadLimit)
  history(@Query() query: MerchantHistoryQueryDto): Promise<MerchantChange[]> {
    return this.merchants.history(HISTORY_PAGE, query.before);
  }

  @Post('merchants/:channel/:account/sub-merchants')
  @ApiOperation({
    summary: "Add a sub-merchant to a service provider's account; every replica takes it within a second (admin)",
  })
  @ApiCreatedResponse({ type: MerchantChangeView })
  @ApiErrors(
    [400, 'a malformed body, or an account that is no service provider'],
    [403, 'a viewer token'],
    [404, 'unknown channel or account'],
    [409, 'a sub-merchant of the account already'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_SUB_MERCHANT_ADD', merchantTarget)
  addSubMerchant(
    @Param('channel') channel: string,
    @Param('account') account: string,
    @Body() dto: AddSubMerchantDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    const target = { channel, account, subMerchantId: dto.subMerchantId };
    return this.merchants.addSubMerchant(target, dto.subAppId, operator.operatorId, (change) =>
      this.record(operator, 'MERCHANT_SUB_MERCHANT_ADDED', dto, change),
    );
  }

  @Post('merchants/:channel/:account/disable')
  @HttpCode(202)
  @ApiOperation({ summary: 'Propose to disable an account or a sub-merchant; another admin approves (admin)' })
  @ApiCreatedResponse({ type: MerchantChangeView })
  @ApiErrors(
    [400, 'no reason'],
    [403, 'a viewer token'],
    [404, 'unknown account or sub-merchant'],
    [409, 'disabled already'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_DISABLE', merchantTarget)
  proposeDisable(
    @Param('channel') channel: string,
    @Param('account') account: string,
    @Body() dto: DisableMerchantDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    const target = { channel, account, subMerchantId: dto.subMerchantId };
    return this.merchants.proposeDisable(target, dto.reason, operator.operatorId, (change) =>
      this.record(operator, 'MERCHANT_DISABLE_PROPOSED', dto, change),
    );
  }

  @Post('merchants/:channel/:account/enable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Enable a disabled account or sub-merchant again, at once (admin)' })
  @ApiOkResponse({ type: MerchantChangeView })
  @ApiErrors([403, 'a viewer token'], [404, 'unknown account or sub-merchant'], [409, 'not disabled'])
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_ENABLE', merchantTarget)
  enable(
    @Param('channel') channel: string,
    @Param('account') account: string,
    @Body() dto: MerchantTargetDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    const target = { channel, account, subMerchantId: dto.subMerchantId };
    return this.merchants.enable(target, operator.operatorId, (change) =>
      this.record(operator, 'MERCHANT_ENABLED', dto, change),
    );
  }

  @Post('merchant-changes/:id/approve')
  @HttpCode(200)
  @ApiOperation({ summary: "Approve another admin's proposal; it applies on every replica within a second (admin)" })
  @ApiOkResponse({ type: MerchantChangeView })
  @ApiErrors(
    [403, 'a viewer token, or the proposer'],
    [404, 'unknown change'],
    [409, 'decided already, or no proposal'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_CHANGE_APPROVE', changeTarget)
  approve(@Param('id') id: string, @CurrentOperator() operator: AuthenticatedOperator): Promise<MerchantChange> {
    return this.merchants.approve(id, operator.operatorId, (change) =>
      this.record(operator, 'MERCHANT_CHANGE_APPROVED', null, change),
    );
  }

  @Post('merchant-changes/:id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a proposal (its proposer may withdraw it) (admin)' })
  @ApiOkResponse({ type: MerchantChangeView })
  @ApiErrors(
    [400, 'no reason'],
    [403, 'a viewer token'],
    [404, 'unknown change'],
    [409, 'decided already, or no proposal'],
  )
  @AdminAccess(AdminRole.Admin)
  @AuditedWrite('MERCHANT_CHANGE_REJECT', changeTarget)
  reject(
    @Param('id') id: string,
    @Body() dto: ReasonDto,
    @CurrentOperator() operator: AuthenticatedOperator,
  ): Promise<MerchantChange> {
    return this.merchants.reject(id, operator.operatorId, dto.reason, (change) =>
      this.record(operator, 'MERCHANT_CHANGE_REJECTED', dto, change),
    );
  }

  private record(operator: AuthenticatedOperator, action: string, requestBody: unknown, change: MerchantChange) {
    return this.audit.record({
      operatorId: operator.operatorId,
      action,
      target: `merchant:${change.channel}:${change.accountId}${change.subMerchantId ? `:${change.subMerchantId}` : ''}`,
      requestBody,
      result: { changeId: change.id, action: change.action, decides: change.decidesChangeId },
    });
  }
}

function merchantTarget(request: FastifyRequest): string {
  const { channel, account } = request.params as { channel?: string; account?: string };
  const sub = (request.body as { subMerchantId?: unknown } | undefined)?.subMerchantId;
  return `merchant:${channel ?? ''}:${account ?? ''}${typeof sub === 'string' ? `:${sub}` : ''}`.slice(0, 128);
}

/** An account's body as its audit rows keep it: the public facts, never the entry's secrets or the files. */
function accountBody(request: FastifyRequest): unknown {
  return { facts: auditedFactsOf(request.body) };
}

function changeTarget(request: FastifyRequest): string {
  return `merchant-change:${(request.params as { id?: string }).id ?? ''}`;
}
