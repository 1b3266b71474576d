import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../platform/http/error.view';

/** What every controller of the internal order API shares in the OpenAPI document. */
export function ApiOrderApi(): ClassDecorator {
  return applyDecorators(
    ApiTags('payment orders'),
    ApiBearerAuth('internal'),
    ApiErrors(
      [401, 'missing or wrong bearer token (INTERNAL_API_TOKEN)'],
      [503, 'INTERNAL_API_TOKEN is not configured, or the database is unavailable (retry)'],
    ),
  );
}
