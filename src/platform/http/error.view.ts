import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse } from '@nestjs/swagger';

/** The body of every error of the service's own APIs (HttpErrorFilter). */
export class ErrorView {
  @ApiProperty({ example: 404 })
  statusCode: number;

  @ApiProperty({ description: 'A stable error code', example: 'OrderNotFound' })
  error: string;

  @ApiProperty({ example: 'order ORD20261129000123 not found' })
  message: string;
}

/** Documents error answers of an operation: `[status, when]` pairs, each with the ErrorView body. */
export function ApiErrors(...answers: Array<[status: number, when: string]>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...answers.map(([status, description]) => ApiResponse({ status, description, type: ErrorView })),
  );
}
