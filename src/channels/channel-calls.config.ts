import { registerAs } from '@nestjs/config';
import { IsOptional, IsUrl } from 'class-validator';
import { IntegerBetween, validateEnv } from '../platform/config/env-validation';

/** The bounds every channel's API calls share, whatever the channel. */
class ChannelCallsEnv {
  @IsOptional()
  @IntegerBetween(100, 120000)
  REFUND_REQUEST_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1000, 3600000)
  BILL_DOWNLOAD_TIMEOUT_MS?: number;
}

export interface ChannelCallsConfig {
  /** One API call (refund, query, close, the bill's URL) taking longer fails and is retried later. */
  requestTimeoutMs: number;
  /** A bill file download (not the call asking for its URL) taking longer fails. */
  billDownloadTimeoutMs: number;
}

export function loadChannelCallsConfig(env: NodeJS.ProcessEnv = process.env): ChannelCallsConfig {
  const vars = validateEnv(ChannelCallsEnv, env);
  return {
    requestTimeoutMs: vars.REFUND_REQUEST_TIMEOUT_MS ?? 10000,
    billDownloadTimeoutMs: vars.BILL_DOWNLOAD_TIMEOUT_MS ?? 600000,
  };
}

export const channelCallsConfig = registerAs('channelCalls', () => loadChannelCallsConfig());

/** An http(s) URL variable; a host without a dot (a compose service name) is fine. */
export function HttpUrl(variable: string): PropertyDecorator {
  return IsUrl(
    { require_tld: false, protocols: ['http', 'https'], require_protocol: true },
    { message: `${variable} must be an http(s) URL` },
  );
}
