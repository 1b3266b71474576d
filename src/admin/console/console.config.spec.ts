import 'reflect-metadata';
import { loadConsoleConfig } from './console.config';
import { ConfigurationError } from '../../platform/config/env-validation';

describe(loadConsoleConfig.name, () => {
  it('should serve the console unless CONSOLE is false', () => {
    expect(loadConsoleConfig({}).enabled).toBe(true);
    expect(loadConsoleConfig({ CONSOLE: 'true' }).enabled).toBe(true);
    expect(loadConsoleConfig({ CONSOLE: 'false' }).enabled).toBe(false);
  });

  it('should refuse a CONSOLE other than true or false, naming it', () => {
    expect(() => loadConsoleConfig({ CONSOLE: 'off' })).toThrow(ConfigurationError);
    expect(() => loadConsoleConfig({ CONSOLE: 'off' })).toThrow(/CONSOLE must be true or false/);
  });
});
