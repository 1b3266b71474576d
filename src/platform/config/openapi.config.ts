import { IsIn, IsOptional } from 'class-validator';
import { validateEnv } from './env-validation';

class OpenApiEnv {
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'OPENAPI must be true or false' })
  OPENAPI?: string;
}

export interface OpenApiConfig {
  /** Serve the OpenAPI document and Swagger UI at /docs: only when asked, it maps the API for anyone. */
  enabled: boolean;
}

export function loadOpenApiConfig(env: NodeJS.ProcessEnv = process.env): OpenApiConfig {
  return { enabled: validateEnv(OpenApiEnv, env).OPENAPI === 'true' };
}
