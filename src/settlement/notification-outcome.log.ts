import { Logger } from '@nestjs/common';
import { AnomalyType } from '../payments/anomaly/anomaly.entity';
import { loadLogLevel, LogLevel } from '../platform/config/logging.config';
import { VerifiedNotification } from '../domain/notification';

const ANOMALIES: ReadonlySet<string> = new Set(Object.values(AnomalyType));
const PRINTS_INFO: ReadonlySet<LogLevel> = new Set(['info', 'debug', 'trace']);

/**
 * One line per committed (or spooled, or replayed from the spool) notification, with the fields an operator searches by: info for a
 * payment's ordinary outcomes, warn for an anomaly (money taken wrongly). Never the raw body, the
 * signature headers or any key: those stay in the delivery log.
 */
export class NotificationOutcomeLog {
  private readonly logger = new Logger('PaymentNotification');
  /** At LOG_LEVEL=warn (production's usual level) an ordinary outcome's line is not even built. */
  private readonly printsInfo = PRINTS_INFO.has(loadLogLevel());

  committed(notification: VerifiedNotification, outcome: string, requestId?: string): void {
    const anomaly = ANOMALIES.has(outcome);
    if (!anomaly && !this.printsInfo) return;
    const line = {
      msg: `${notification.channel} ${notification.eventType}: ${outcome}`,
      channel: notification.channel,
      orderNo: notification.outTradeNo,
      transactionId: notification.transactionId,
      refundNo: notification.refund?.refundNo,
      outcome,
      // The notify route runs without pino-http (logging.module.ts): its request id comes from here.
      ...(requestId === undefined ? {} : { req: { id: requestId } }),
    };
    if (anomaly) this.logger.warn(line);
    else this.logger.log(line);
  }
}
