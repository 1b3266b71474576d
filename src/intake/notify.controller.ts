import { Controller, Post, Res, UseInterceptors } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { answeredByChannel } from '../platform/http/http-error.filter';
import { VerifiedNotification } from '../domain/notification';
import { Arrival, DeliveryOutcome, Settlement } from '../settlement/settlement.service';
import { NotifyTransactionInterceptor } from './notify-transaction.interceptor';
import { BODY_AS_BYTES } from './notify-body';
import { Arrived, Verified } from './verified-notification.param';

/**
 * The platforms' callback endpoints, one per notification endpoint of a registered channel (POST /notify/<notifyPath>).
 * Known repeats were acked before Nest (NotificationIntake.answerKnownRepeat). For the rest,
 * NotifyTransactionInterceptor runs this handler in ONE transaction and commits it, records the
 * delivery and acks; HttpErrorFilter answers failures in each channel's format.
 */
@Controller('notify')
@UseInterceptors(NotifyTransactionInterceptor)
export class NotifyController {
  constructor(private readonly settlement: Settlement) {}

  /**
   * `@Res()` because the answer is the channel's own ack (a status and body of its own), sent by
   * the interceptor after the commit; Nest would otherwise answer 201 with the handler's result.
   */
  @Post(':channel')
  @RouteConfig({ ...BODY_AS_BYTES, ...answeredByChannel('channel') })
  receive(
    @Verified() notification: VerifiedNotification,
    @Arrived() arrival: Arrival,
    @Res() _ackedByInterceptor: unknown,
  ): Promise<DeliveryOutcome> {
    return this.settlement.apply(notification, arrival);
  }
}
