/**
 * Every channel the simulator plays: adding one is a folder of its own under tools/simulator/ (its key set, its
 * notifications, its fake platform, behind ChannelSimulator) and a line here. The commands ask this list, and never
 * name a channel; what they ask of every channel at once is below.
 */
import { UsageError } from './cli';
import {
  ChannelCommandPart,
  ChannelOptions,
  ChannelSimulator,
  OptionValues,
  SimulatedChannel,
} from './channel-simulator';
import type { DevKeys } from './dev-keys';
import type { FakePlatformAccounts } from './fake-platform';
import { alipaySimulator } from './alipay/alipay.simulator';
import { unionpaySimulator } from './unionpay/unionpay.simulator';
import { wechatpaySimulator } from './wechatpay/wechatpay.simulator';

export const CHANNEL_SIMULATORS: readonly ChannelSimulator[] = [wechatpaySimulator, alipaySimulator, unionpaySimulator];

export const CHANNELS: readonly SimulatedChannel[] = CHANNEL_SIMULATORS.map((c) => c.name);

/** The channel `--channel` names; a UsageError for any other name. */
export function channelSimulator(channel: SimulatedChannel | undefined): ChannelSimulator {
  const found = CHANNEL_SIMULATORS.find((c) => c.name === channel);
  if (!found) throw new UsageError(`--channel must be ${CHANNELS.join(' or ')}, got "${channel ?? ''}"`);
  return found;
}

/** `--channel`, checked. */
export function channelOption(value: string | undefined): SimulatedChannel {
  return channelSimulator(value).name;
}

/** The channels' parts of one command (`pay`, `init` …), in the list's order. */
export function commandParts(
  part: (channel: ChannelSimulator) => ChannelCommandPart | undefined,
): ChannelCommandPart[] {
  return CHANNEL_SIMULATORS.map(part).filter((p): p is ChannelCommandPart => p !== undefined);
}

/** The options the channels add to a command, for parseArgs. */
export function channelOptions(parts: ChannelCommandPart[]): ChannelOptions {
  return Object.assign({}, ...parts.map((p) => p.options ?? {})) as ChannelOptions;
}

/** The options the channels add to a command, for its usage line (with a leading space when there are any). */
export function channelUsage(parts: ChannelCommandPart[]): string {
  return parts.map((p) => (p.usage ? ` ${p.usage}` : '')).join('');
}

/** Every channel's check of the values, for a command of `channel` (or of all). */
export function checkChannelOptions(
  parts: ChannelCommandPart[],
  values: OptionValues,
  channel?: SimulatedChannel,
): void {
  for (const part of parts) part.check?.(values, channel);
}

/** Every channel's keys, into the key set's folder: their parts of keys.json, under their names. */
export async function createChannelKeys(dir: string, values: OptionValues): Promise<Record<string, object>> {
  const parts: Record<string, object> = {};
  for (const channel of CHANNEL_SIMULATORS) {
    const part = await channel.keySet.create(dir, values);
    if (part) parts[channel.name] = part;
  }
  return parts;
}

/** The service's variables of every channel, their APIs on the simulator's platform server. */
export function channelsEnvironment(keys: DevKeys, servicePort?: number): Record<string, string> {
  const ports = { platformPort: keys.platformPort, servicePort };
  return Object.assign({}, ...CHANNEL_SIMULATORS.map((c) => c.keySet.serviceEnvironment(keys, ports))) as Record<
    string,
    string
  >;
}

/** The shared fake platform's view of the key set's accounts: it verifies the service's requests and signs its answers. */
export function fakePlatformAccounts(keys: DevKeys): FakePlatformAccounts {
  const accounts = CHANNEL_SIMULATORS.map((c) => c.keySet.fakePlatformAccounts?.(keys) ?? {});
  return Object.assign({}, ...accounts) as FakePlatformAccounts;
}
