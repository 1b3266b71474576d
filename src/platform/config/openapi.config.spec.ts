import 'reflect-metadata';
import { loadOpenApiConfig } from './openapi.config';
import { ConfigurationError } from './env-validation';

describe(loadOpenApiConfig.name, () => {
  it('should serve the OpenAPI document only when OPENAPI is true (off by default)', () => {
    expect(loadOpenApiConfig({}).enabled).toBe(false);
    expect(loadOpenApiConfig({ OPENAPI: 'true' }).enabled).toBe(true);
    expect(loadOpenApiConfig({ OPENAPI: 'false' }).enabled).toBe(false);
  });

  it('should refuse an OPENAPI other than true or false, naming it', () => {
    expect(() => loadOpenApiConfig({ OPENAPI: 'no' })).toThrow(ConfigurationError);
    expect(() => loadOpenApiConfig({ OPENAPI: 'no' })).toThrow(/OPENAPI must be true or false/);
  });
});
