import { Channel } from '../domain/notification';
import { ChannelRegistration } from './channel-registration';
import { CHANNEL_REGISTRATIONS, orderNoProblem, REGISTERED_CHANNELS } from './registered-channels';

/** Two registrations that only set order-number rules: the rest is never called here. */
function withRule(channel: string, pattern: RegExp, description: string): ChannelRegistration {
  return { ...CHANNEL_REGISTRATIONS[0], channel: channel as Channel, orderNo: { pattern, description } };
}
const RULES = [
  withRule('SHORT', /^\w{6,32}$/, '6 to 32 letters, digits or _'),
  withRule('PLAIN', /^[A-Za-z0-9]{1,64}$/, 'up to 64 letters or digits'),
];

describe(orderNoProblem.name, () => {
  it('should accept an order number that keeps the rule of its channel', () => {
    expect(orderNoProblem('ORD_000001', 'SHORT', RULES)).toBeUndefined();
    expect(orderNoProblem('A', 'PLAIN', RULES)).toBeUndefined();
  });

  it('should name the channel and its rule when the order number breaks it', () => {
    expect(orderNoProblem('ORD1', 'SHORT', RULES)).toBe('orderNo must be 6 to 32 letters, digits or _ for SHORT');
    expect(orderNoProblem('ORD_000001', 'PLAIN', RULES)).toBe('orderNo must be up to 64 letters or digits for PLAIN');
  });

  it('should apply every rule when the order names no channel', () => {
    expect(orderNoProblem('ORD000001', undefined, RULES)).toBeUndefined();
    expect(orderNoProblem('ORD_000001', undefined, RULES)).toMatch(/for PLAIN$/);
    expect(orderNoProblem('ORD1', undefined, RULES)).toMatch(/for SHORT$/);
  });

  it('should accept anything at a channel without a rule', () => {
    expect(orderNoProblem('x', 'OTHER', RULES)).toBeUndefined();
    expect(orderNoProblem('x', undefined, [])).toBeUndefined();
  });
});

describe('REGISTERED_CHANNELS', () => {
  it('should list each registered channel once, in the order of the registration list', () => {
    expect(REGISTERED_CHANNELS).toEqual(CHANNEL_REGISTRATIONS.map((r) => r.channel));
    expect(new Set(REGISTERED_CHANNELS).size).toBe(REGISTERED_CHANNELS.length);
  });
});
