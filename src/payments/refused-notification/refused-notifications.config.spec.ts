import { loadRefusedNotificationsConfig } from './refused-notifications.config';
import { ConfigurationError } from '../../platform/config/env-validation';

describe(loadRefusedNotificationsConfig.name, () => {
  const sut = loadRefusedNotificationsConfig;

  it('should keep 1000 new refused notifications per channel and hour by default', () => {
    expect(sut({})).toEqual({ perHour: 1000 });
    expect(sut({ REFUSED_NOTIFICATIONS_PER_HOUR: ' ' })).toEqual({ perHour: 1000 });
  });

  it('should read the cap, 0 keeping none', () => {
    expect(sut({ REFUSED_NOTIFICATIONS_PER_HOUR: '50' })).toEqual({ perHour: 50 });
    expect(sut({ REFUSED_NOTIFICATIONS_PER_HOUR: '0' })).toEqual({ perHour: 0 });
  });

  it.each(['-1', '1.5', 'many', '1000001'])('should refuse REFUSED_NOTIFICATIONS_PER_HOUR=%s naming it', (value) => {
    expect(() => sut({ REFUSED_NOTIFICATIONS_PER_HOUR: value })).toThrow(ConfigurationError);
    expect(() => sut({ REFUSED_NOTIFICATIONS_PER_HOUR: value })).toThrow(/REFUSED_NOTIFICATIONS_PER_HOUR/);
  });
});
