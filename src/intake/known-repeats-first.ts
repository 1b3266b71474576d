import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { NotificationIntake, NotifyRequest } from './notification-intake';
import { wantsBytes } from './notify-body';

/**
 * Puts NotificationIntake.answerKnownRepeat in front of Nest's request pipeline on the notify
 * routes (the routes whose body stays bytes): a repeat it acks ends there; every other request goes
 * on to NotifyController as before. A callback-style hook: it costs no promise on the other routes.
 */
export function answerKnownRepeatsFirst(app: NestFastifyApplication): void {
  const intake = app.get(NotificationIntake);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preHandler', (request, reply, done) => {
      if (!wantsBytes(request)) return done();
      // answerKnownRepeat never rejects: a failure is kept for Nest's pipeline to answer.
      void intake.answerKnownRepeat(request as NotifyRequest, reply).then((answered) => answered || done());
    });
}
