import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { REGISTERED_CHANNELS } from '../channels/registered-channels';
import { AnomalyStatus, AnomalyType } from '../payments/anomaly/anomaly.entity';
import { AdminRole } from '../platform/config/admin.config';
import { ApiErrors } from '../platform/http/error.view';
import { RefundPurpose, RefundStatus } from '../refund/refund.entity';
import { REFUSAL_REASONS } from '../payments/refused-notification/refused-notification.entity';
import { AdminAccess } from './admin-auth.guard';

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

  @ApiProperty({ description: 'Why a refused notification was kept', example: REFUSAL_REASONS })
  refusalReasons: readonly string[];
}

const VOCABULARY: VocabularyView = {
  channels: REGISTERED_CHANNELS,
  anomalyTypes: Object.values(AnomalyType),
  anomalyStatuses: Object.values(AnomalyStatus),
  refundPurposes: Object.values(RefundPurpose),
  refundStatuses: Object.values(RefundStatus),
  refusalReasons: REFUSAL_REASONS,
};

/** What the console's filters offer: a list typed by hand in the console would drift from these. */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiErrors([401, 'missing or unknown operator token (ADMIN_TOKENS)'], [503, 'ADMIN_TOKENS is not configured'])
@Controller('admin')
export class VocabularyController {
  @Get('vocabulary')
  @ApiOperation({
    summary: 'Channels, anomaly types and statuses, refund purposes and statuses, refusal reasons (viewer)',
  })
  @ApiOkResponse({ type: VocabularyView })
  @AdminAccess(AdminRole.Viewer)
  vocabulary(): VocabularyView {
    return VOCABULARY;
  }
}
