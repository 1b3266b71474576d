import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The three Standard Webhooks headers: the message id (the event id, the same at every attempt),
 * the attempt's time, and `v1,<base64 HMAC-SHA256 of id.timestamp.body>` per secret, space-separated
 * (after a rotation both the new and the old secret sign, so receivers can switch at their pace).
 */
export function signedHeaders(
  secrets: string[],
  messageId: string,
  timestamp: Date,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' '),
  };
}

/** The body every attempt sends: `{type, timestamp, data}`, data being the event RabbitMQ carries. */
export function messageBody(event: { type: string; occurredAt: string }): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event });
}
