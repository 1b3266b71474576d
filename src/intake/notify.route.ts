import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyReply } from 'fastify';
import { PlatformReply } from '../channels/payment-channel';
import { NotificationIntake } from './notification-intake';
import { NotifyRefusals } from './notify-refusals';
import { BODY_AS_BYTES } from './notify-body';

type NotifyRoute = { Params: { channel: string } };

/**
 * The platforms' callback endpoints, POST /notify/<notifyPath>, as a Fastify route outside Nest's
 * request pipeline: bytes in (the body stays unparsed), the platform's reply out. NotificationIntake
 * is the whole use case; a body Fastify refused before it (too large, an unsupported type) is
 * answered in the platform's format as well.
 */
export function serveNotifyRoute(app: NestFastifyApplication): void {
  const intake = app.get(NotificationIntake);
  const refusals = app.get(NotifyRefusals);
  app
    .getHttpAdapter()
    .getInstance()
    .post<NotifyRoute>('/notify/:channel', {
      config: BODY_AS_BYTES,
      errorHandler: (error, request, reply) => {
        send(reply, refusals.answer(error, request.params.channel, request.id));
      },
      handler: async (request, reply) => {
        const answer = await intake.receive({
          notifyPath: request.params.channel,
          body: request.body,
          headers: request.headers,
          requestId: request.id,
        });
        send(reply, answer);
        return reply;
      },
    });
}

function send(reply: FastifyReply, answer: PlatformReply): void {
  void reply.status(answer.status).headers(answer.headers).send(answer.body);
}
