import { CHANNEL_REGISTRATIONS, REGISTERED_CHANNELS } from './registered-channels';

describe('REGISTERED_CHANNELS', () => {
  it('should list each registered channel once, in the order of the registration list', () => {
    expect(REGISTERED_CHANNELS).toEqual(CHANNEL_REGISTRATIONS.map((r) => r.channel));
    expect(new Set(REGISTERED_CHANNELS).size).toBe(REGISTERED_CHANNELS.length);
  });
});
