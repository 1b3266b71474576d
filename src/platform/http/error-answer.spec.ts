import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  NotFoundException,
  PayloadTooLargeException,
  UnauthorizedException,
} from '@nestjs/common';
import { DomainError } from '../../domain/domain-error';
import { describeError, errorBody } from './error-answer';

describe("the error answers of the service's APIs", () => {
  it("should answer a framework's exception with the product's code for its status, never the class name", () => {
    expect(describeError(new BadRequestException(['amount must be an integer']))).toEqual({
      status: 400,
      code: 'MalformedRequest',
      message: 'amount must be an integer',
    });
    expect(describeError(new NotFoundException('Cannot GET /admin/nothing'))).toMatchObject({
      status: 404,
      code: 'NotFound',
    });
    expect(describeError(new UnauthorizedException()).code).toBe('Unauthenticated');
    expect(describeError(new ForbiddenException()).code).toBe('Forbidden');
    expect(describeError(new PayloadTooLargeException()).code).toBe('PayloadTooLarge');
    expect(describeError(new HttpException('teapot', 418)).code).toBe('MalformedRequest');
  });

  it("should answer Fastify's own client errors with the product's code, not Fastify's internal one", () => {
    const unsupported = Object.assign(new Error('Unsupported Media Type: text/csv'), {
      statusCode: 415,
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    });
    const badJson = Object.assign(new Error('Body is not valid JSON'), {
      statusCode: 400,
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    });
    expect(describeError(unsupported)).toMatchObject({ status: 415, code: 'UnsupportedMediaType' });
    expect(describeError(badJson)).toMatchObject({ status: 400, code: 'MalformedRequest' });
  });

  it("should keep a domain error's own code, and write the code as the body's error", () => {
    const answer = describeError(new DomainError('OrderNotFound', 'order X not found'));
    expect(answer).toEqual({ status: 404, code: 'OrderNotFound', message: 'order X not found' });
    expect(errorBody(answer)).toEqual({ statusCode: 404, error: 'OrderNotFound', message: 'order X not found' });
  });
});
