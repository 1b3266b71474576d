import { Injectable, Logger } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Counter } from 'prom-client';
import { PlatformReply } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';
import { describeError, errorBody, logFailure } from '../platform/http/error-answer';
import { NOTIFICATIONS_TOTAL } from '../platform/metrics/metrics.module';

/**
 * What an unauthenticated caller of a notify route is told of a refusal that would name our
 * configuration (merchant and app ids, key ids, fingerprints): the kind, in general terms. The log
 * line keeps the specifics for the operator.
 */
const GENERAL_REFUSALS: Partial<Record<string, string>> = {
  InvalidSignature: 'sign does not verify: the signature is refused',
  UnknownSigningKey: 'the signing key or certificate is not one this service trusts',
  MerchantMismatch: 'the notification is not for a merchant or application of this service',
  Undecryptable: 'the encrypted content does not decrypt with the key of this merchant',
};

/**
 * A notify request that is not acked gets the failure its platform understands as "deliver again
 * later", in that platform's format, and is counted: refusals (never to be trusted, malformed, or
 * for an order this service does not know) as REFUSED, transient failures (5xx) as FAILED. An
 * unknown order is retried by the platform too, but counts as REFUSED: PaymentNotificationsRefused
 * fires when many are, which means orders are not being registered.
 */
@Injectable()
export class NotifyRefusals {
  private readonly logger = new Logger('NotifyRoute');

  constructor(
    private readonly channels: PaymentChannels,
    @InjectMetric(NOTIFICATIONS_TOTAL) private readonly notifications: Counter<string>,
  ) {}

  answer(failure: unknown, notifyPath: string, requestId: string): PlatformReply {
    const answer = describeError(failure);
    // The notify route runs without request logging: its lines carry the request id themselves.
    const line = {
      msg: `POST /notify/${notifyPath} → ${answer.status} ${answer.code}: ${answer.message}`,
      req: { id: requestId },
    };
    logFailure(this.logger, line, answer, failure);
    const channel = this.channels.byNotifyPath(notifyPath);
    if (!channel) return { status: answer.status, headers: {}, body: errorBody(answer) };
    const outcome = answer.status >= 500 ? 'FAILED' : 'REFUSED';
    this.notifications.inc({ channel: channel.channel, outcome, reason: answer.code });
    return channel.failureReply(answer.status, GENERAL_REFUSALS[answer.code] ?? answer.message);
  }
}
