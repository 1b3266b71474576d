import { Injectable, Logger } from '@nestjs/common';
import { NotifyEndpoint } from '../../channels/payment-channel';
import { PaymentChannels } from '../../channels/payment-channels';
import { DomainError } from '../../domain/domain-error';
import { RawDelivery, VerifiedNotification } from '../../domain/notification';
import { MerchantDirectory } from '../../payments/merchants/merchant-directory';

/** A request at the notify route as it arrived: the path segment naming the endpoint, the bytes, the headers. */
export interface IncomingDelivery {
  notifyPath: string;
  /** The exact bytes for a JSON, form or XML body (see notify-body.ts); anything else is refused. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  /** The request's correlation id (X-Request-Id). */
  requestId: string;
}

export interface VerifiedDelivery {
  channel: NotifyEndpoint;
  notification: VerifiedNotification;
}

/**
 * The first step of every notification: the channel its path names verifies the signature over
 * the exact bytes received (the notify routes keep their body unparsed, see notify-body.ts), so
 * nothing else runs for a forged request.
 */
@Injectable()
export class NotificationVerifier {
  private readonly logger = new Logger(NotificationVerifier.name);

  constructor(
    private readonly channels: PaymentChannels,
    private readonly directory: MerchantDirectory,
  ) {}

  verify({ notifyPath, body, headers }: IncomingDelivery): VerifiedDelivery {
    const channel = this.channels.byNotifyPath(notifyPath);
    if (!channel) throw new DomainError('NotFound', `no payment channel at /notify/${notifyPath}`);
    if (!channel.enabled) {
      throw new DomainError(
        'ChannelDisabled',
        `${channel.channel} notifications are disabled: no keys are configured for this channel`,
      );
    }
    // Only JSON, form and XML bodies arrive as bytes; other content types never reach a verifier.
    if (!Buffer.isBuffer(body)) {
      throw new DomainError(
        'MalformedRequest',
        `unsupported Content-Type ${String(headers['content-type'] ?? '(none)')}`,
      );
    }
    if (body.length === 0) throw new DomainError('MalformedRequest', 'empty request body');
    const notification = this.readOrRefuse(channel, { body, headers });
    // An account or sub-merchant an operator disabled: refused (and kept) as a foreign one is.
    this.directory.refuseIfDisabled(notification);
    return { channel, notification };
  }

  /**
   * Verification only reads the bytes received: whatever else a channel's parser throws (a library
   * error on a hostile document) is the sender's malformed request, never an unauthenticated 5xx.
   */
  private readOrRefuse(channel: NotifyEndpoint, delivery: RawDelivery): VerifiedNotification {
    try {
      return channel.verify(delivery);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.logger.warn(`${channel.notifyPath}: a parser refused the notification: ${String(error)}`.slice(0, 300));
      throw new DomainError('MalformedRequest', 'the notification could not be read');
    }
  }
}
