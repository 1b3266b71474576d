import { Controller, Post, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { FastifyReply, FastifyRequest } from 'fastify';
import { NotificationPipeline } from './notification-pipeline';
import { BODY_AS_BYTES } from './notify-body';

/**
 * The platforms' callback endpoints, one per registered channel (POST /notify/wechatpay, /notify/alipay).
 * NotificationPipeline holds the steps (verify → transaction → delivery log → ack, spool when the
 * database is away); HttpErrorFilter answers failures in each channel's format.
 */
@Controller('notify')
export class NotifyController {
  constructor(private readonly pipeline: NotificationPipeline) {}

  /** `@Res()` leaves the reply to the pipeline: each channel has its own ack. */
  @Post(':channel')
  @RouteConfig(BODY_AS_BYTES)
  receive(
    @Req() request: FastifyRequest<{ Params: { channel?: string } }>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.pipeline.receive(request, reply);
  }
}
