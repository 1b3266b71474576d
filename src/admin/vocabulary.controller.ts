import { Controller, Get, Inject } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { REGISTERED_CHANNELS } from '../channels/registered-channels';
import { AnomalyStatus, AnomalyType } from '../payments/anomaly/anomaly.entity';
import { AdminRole } from '../operators/admin.config';
import { fourEyesConfig } from '../operators/four-eyes.config';
import { OrderStatus } from '../order/order-status';
import { ApiErrors } from '../platform/http/error.view';
import { RefundPurpose, RefundStatus } from '../refund/refund.entity';
import { REFUSAL_REASONS } from '../payments/refused-notification/refused-notification.entity';
import { AdminAccess } from '../operators/admin-auth.guard';

/** The values the admin API's filters and records take, each read from its registry or enum. */
export class VocabularyView {
  @ApiProperty({ description: 'The registered payment channels', example: REGISTERED_CHANNELS })
  channels: readonly string[];

  @ApiProperty({ example: Object.values(AnomalyType) })
  anomalyTypes: readonly string[];

  @ApiProperty({ example: Object.values(AnomalyStatus) })
  anomalyStatuses: readonly string[];

  @ApiProperty({ example: Object.values(RefundPurpose) })
  refundPurposes: readonly string[];

  @ApiProperty({ example: Object.values(RefundStatus) })
  refundStatuses: readonly string[];

  @ApiProperty({ example: Object.values(OrderStatus) })
  orderStatuses: readonly string[];

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      "REFUND_APPROVAL_THRESHOLD in integer minor units: a refund that brings its payment's refunds to this " +
      'or more waits for a second admin; null when none does',
  })
  refundApprovalThreshold: number | null;
  @ApiProperty({ description: 'Why a refused notification was kept', example: REFUSAL_REASONS })
  refusalReasons: readonly string[];
}

const LISTS = {
  channels: REGISTERED_CHANNELS,
  anomalyTypes: Object.values(AnomalyType),
  anomalyStatuses: Object.values(AnomalyStatus),
  refundPurposes: Object.values(RefundPurpose),
  refundStatuses: Object.values(RefundStatus),
  orderStatuses: Object.values(OrderStatus),
  refusalReasons: REFUSAL_REASONS,
};

/** What the console's filters offer: a list typed by hand in the console would drift from these. */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors([401, 'missing or unknown operator token (ADMIN_TOKENS)'], [503, 'ADMIN_TOKENS is not configured'])
@Controller('admin')
export class VocabularyController {
  constructor(@Inject(fourEyesConfig.KEY) private readonly fourEyes: ConfigType<typeof fourEyesConfig>) {}

  @Get('vocabulary')
  @ApiOperation({
    summary:
      'Channels, anomaly types and statuses, refund purposes and statuses, order statuses, refusal reasons; the refund approval threshold (viewer)',
  })
  @ApiOkResponse({ type: VocabularyView })
  @AdminAccess(AdminRole.Viewer)
  vocabulary(): VocabularyView {
    return { ...LISTS, refundApprovalThreshold: this.fourEyes.approvalThreshold ?? null };
  }
}
