import { Controller, Get, Inject } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { PAYMENT_METHODS, REGISTERED_CHANNELS } from '../channels/registered-channels';
import { ChannelPaymentState } from '../order/channel-payment.entity';
import { AnomalyStatus, AnomalyType, ResolutionReason, ResolutionStatus } from '../payments/anomaly/anomaly.entity';
import { RefundNoticeStatus } from '../domain/notification';
import { EventType } from '../events/payment-events';
import { DeliveryStatus } from '../events/webhooks/webhook-delivery.entity';
import { AUDIT_ACTIONS } from '../operators/audit/audit-actions';
import { ItemOutcome } from '../reconciliation/reconciliation-item.entity';
import { RunStatus } from '../reconciliation/reconciliation-run.entity';
import { DeliveryOutcome } from '../settlement/settlement.service';
import { AdminRole } from '../operators/admin.config';
import { fourEyesConfig } from '../operators/four-eyes.config';
import { OrderEvent, OrderStatus } from '../order/order-status';
import { ApiErrors } from '../platform/http/error.view';
import { RefundPurpose, RefundStatus } from '../refund/refund.entity';
import { ORDER_SERVICE } from '../refund/refunds';
import { REFUSAL_REASONS, RefusedStatus } from '../payments/refused-notification/refused-notification.entity';
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

  @ApiProperty({ description: 'A refused notification: REFUSED until re-verified and ACCEPTED' })
  refusedStatuses: readonly string[];

  @ApiProperty({ description: 'What became of a delivery (the delivery log, the callback statistics)' })
  deliveryOutcomes: readonly string[];

  @ApiProperty({ description: 'What an admin_audit row names (GET /admin/anomalies/:id/history)' })
  auditActions: readonly string[];

  @ApiProperty({ description: 'The after-payment events (webhook endpoints subscribe to them)' })
  eventTypes: readonly string[];

  @ApiProperty({ description: "An order's status history events" })
  orderEvents: readonly string[];

  @ApiProperty({ description: 'Why an admin closed an anomaly without a refund' })
  resolutionReasons: readonly string[];

  @ApiProperty({ description: "An anomaly's resolution: awaiting a second admin, or applied" })
  resolutionStatuses: readonly string[];

  @ApiProperty({ description: "A webhook message's status" })
  webhookDeliveryStatuses: readonly string[];

  @ApiProperty({ description: "A reconciliation run's status" })
  reconciliationStatuses: readonly string[];

  @ApiProperty({ description: "A reconciliation item's outcome" })
  reconciliationOutcomes: readonly string[];

  @ApiProperty({ description: 'The methods a payment can be created at the channel with (POST /payment-orders)' })
  paymentMethods: readonly string[];

  @ApiProperty({ description: "Where a payment created at the channel stands (an order's createdPayment)" })
  channelPaymentStates: readonly string[];

  @ApiProperty({
    description: "Who a shop's own refund (POST /orders/:orderNo/refunds) is asked by",
    example: ORDER_SERVICE,
  })
  shopRequester: string;
}

/** The lists GET /admin/vocabulary serves: every code the admin API answers with, which the console translates. */
export const VOCABULARY_LISTS = {
  channels: REGISTERED_CHANNELS,
  anomalyTypes: Object.values(AnomalyType),
  anomalyStatuses: Object.values(AnomalyStatus),
  refundPurposes: Object.values(RefundPurpose),
  refundStatuses: Object.values(RefundStatus),
  orderStatuses: Object.values(OrderStatus),
  refusalReasons: REFUSAL_REASONS,
  refusedStatuses: Object.values(RefusedStatus),
  deliveryOutcomes: [
    ...new Set<string>([
      ...Object.values(DeliveryOutcome),
      ...Object.values(RefundNoticeStatus).map((status) => `REFUND_${status}`),
      'UNKNOWN_REFUND',
    ]),
  ],
  auditActions: AUDIT_ACTIONS,
  eventTypes: Object.values(EventType),
  orderEvents: Object.values(OrderEvent),
  resolutionReasons: Object.values(ResolutionReason),
  resolutionStatuses: Object.values(ResolutionStatus),
  webhookDeliveryStatuses: Object.values(DeliveryStatus),
  reconciliationStatuses: Object.values(RunStatus),
  reconciliationOutcomes: Object.values(ItemOutcome),
  paymentMethods: PAYMENT_METHODS,
  channelPaymentStates: Object.values(ChannelPaymentState),
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
    return {
      ...VOCABULARY_LISTS,
      shopRequester: ORDER_SERVICE,
      refundApprovalThreshold: this.fourEyes.approvalThreshold ?? null,
    };
  }
}
