import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ValidationPipe } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes } from 'class-validator';

/**
 * Every optional field of every DTO under src/ (the files in a dto/ folder and *.dto.ts), found
 * from class-validator's metadata, driven with null through the app's own ValidationPipe: a field
 * documented `nullable` takes it, every other one answers 400 saying so (instead of a NOT NULL
 * column's 500).
 */
const SRC = join(__dirname, '..', '..', 'src');
/** Where @nestjs/swagger's ApiProperty keeps a field's documentation (DECORATORS.API_MODEL_PROPERTIES, not exported). */
const API_MODEL_PROPERTIES = 'swagger/apiModelProperties';

function dtoFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return dtoFiles(path);
    const isDto = /\.dto\.ts$/.test(entry.name) || /(^|\/)dto$/.test(relative(SRC, dir));
    return isDto && entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

type DtoClass = new () => object;

interface OptionalField {
  name: string;
  dto: DtoClass;
  property: string;
  nullable: boolean;
}

async function optionalFields(): Promise<OptionalField[]> {
  const fields: OptionalField[] = [];
  for (const file of dtoFiles(SRC)) {
    const exports = (await import(file)) as Record<string, unknown>;
    for (const dto of Object.values(exports)) {
      if (typeof dto !== 'function') continue;
      const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
      const optional = new Set(
        metadata.filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION).map((m) => m.propertyName),
      );
      for (const property of optional) {
        const documented = Reflect.getMetadata(API_MODEL_PROPERTIES, dto.prototype as object, property) as
          { nullable?: boolean } | undefined;
        fields.push({
          name: `${dto.name}.${property}`,
          dto: dto as DtoClass,
          property,
          nullable: documented?.nullable === true,
        });
      }
    }
  }
  return fields;
}

/** The app's pipe (src/start/app.factory.ts): the 400's messages, or undefined when it passes. */
async function messagesFor(field: OptionalField, value: unknown): Promise<string[] | undefined> {
  const pipe = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
  });
  try {
    await pipe.transform({ [field.property]: value }, { type: 'body', metatype: field.dto });
    return undefined;
  } catch (error) {
    return ((error as { getResponse(): { message: string[] } }).getResponse().message ?? []).filter((m) =>
      m.startsWith(`${field.property} `),
    );
  }
}

describe('optional DTO fields', () => {
  it('should refuse null with a 400 that says so, unless the field is documented nullable', async () => {
    const fields = await optionalFields();

    const answers = await Promise.all(
      fields.map(async (field) => ({ field, messages: await messagesFor(field, null) })),
    );

    const wrong = answers
      .filter(({ field, messages }) =>
        field.nullable
          ? messages !== undefined && messages.length > 0
          : !messages?.includes(`${field.property} must not be null: leave it out instead`),
      )
      .map(({ field, messages }) => `${field.name}: ${JSON.stringify(messages)}`);
    expect(wrong).toEqual([]);
    // The fields found: the lists of every feature's DTOs, the one documented nullable among them.
    expect(fields.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'UpdateWebhookEndpointDto.enabled',
        'UpdateWebhookEndpointDto.description',
        'EmergencyRefundDto.amount',
        'ShopRefundDto.amount',
        'CreatePaymentOrderDto.merchantId',
        'ReconciliationAccountDto.merchantId',
        'RefusedNotificationQueryDto.reason',
        'ResolveAnomalyDto.reference',
      ]),
    );
    expect(fields.filter((f) => f.nullable).map((f) => f.name)).toEqual(['UpdateWebhookEndpointDto.eventTypes']);
  });

  it('should take every optional field left out', async () => {
    const fields = await optionalFields();

    const answers = await Promise.all(fields.map(async (field) => (await messagesFor(field, undefined)) ?? []));

    expect(answers.flat()).toEqual([]);
  });
});
