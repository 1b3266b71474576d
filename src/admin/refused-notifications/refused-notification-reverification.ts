import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { DataSource } from 'typeorm';
import { asReceivedAt } from '../../channels/verification-clock';
import { DomainError } from '../../domain/domain-error';
import { NotificationIntake } from '../../intake/notification-intake';
import { RefusedNotification } from '../../payments/refused-notification/refused-notification.entity';
import { RefusedNotificationRepository } from '../../payments/refused-notification/refused-notification.repository';
import { RefusedNotifications } from '../../payments/refused-notification/refused-notifications';
import { AuditLog } from '../../operators/audit/audit-log';
import { ReverificationView, toSummaryView } from './refused-notification.dto';
import { knownId } from './refused-notification.queries';

/**
 * An admin's second look at a kept refused notification, after fixing a key or registering the
 * order: its stored bytes and headers go through the notify use case (NotificationIntake.receive),
 * the one that settles every delivery, with the channels' clock at the moment it was received, so
 * that its signature is checked in full and its time window as it was then. The settlement core
 * settles a payment at most once, however many re-verifications run at once.
 */
@Injectable()
export class RefusedNotificationReverification {
  constructor(
    private readonly db: DataSource,
    private readonly intake: NotificationIntake,
    private readonly refused: RefusedNotifications,
    private readonly repository: RefusedNotificationRepository,
    private readonly audit: AuditLog,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  async reverify(id: string, operatorId: string): Promise<ReverificationView> {
    const row = await this.db.getRepository(RefusedNotification).findOneBy({ id: knownId(id) });
    if (!row) throw new DomainError('NotFound', `refused notification ${id} not found`);
    const requestId = `reverify-${id}-${randomUUID()}`;
    const { result: answer, failure } = await this.refused.reverify(requestId, () =>
      asReceivedAt(row.firstSeenAt, () =>
        this.intake.receive({ notifyPath: row.notifyPath, body: row.rawBody, headers: row.headers, requestId }),
      ),
    );
    // A transient failure (the database) says nothing about the notification: the admin retries.
    if (answer.status >= 500) {
      if (failure instanceof Error) throw failure;
      throw new DomainError('FeatureDisabled', 'the delivery could not be settled');
    }
    const accepted = answer.status < 300;
    const reason = accepted ? null : failure instanceof DomainError ? failure.code : `HTTP ${answer.status}`;
    await this.txHost.withTransaction(async () => {
      await this.repository.recordReverification(id, { accepted, reason, operatorId, at: new Date() });
      await this.audit.record({
        operatorId,
        action: 'REFUSED_NOTIFICATION_REVERIFIED',
        target: `refused-notification:${id}`,
        requestBody: null,
        result: { accepted, reason, answerStatus: answer.status, channel: row.channel, firstReason: row.reason },
      });
    });
    const updated = await this.db.getRepository(RefusedNotification).findOneByOrFail({ id });
    return {
      ...toSummaryView({ ...updated, bodyBytes: updated.rawBody.length }),
      accepted,
      answerStatus: answer.status,
    };
  }
}
