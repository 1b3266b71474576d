import { DynamicModule, Provider } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ClsModule, ClsService } from 'nestjs-cls';
import { withoutClsEnhancers } from './cls-without-enhancers';

function providedTokens(module: DynamicModule): unknown[] {
  return (module.imports ?? []).flatMap((imported) =>
    'providers' in imported
      ? (imported.providers as Provider[]).map((p) => (typeof p === 'object' ? p.provide : p))
      : [],
  );
}

describe(withoutClsEnhancers.name, () => {
  it('should drop the global guard and interceptor that nestjs-cls registers unmounted', () => {
    const original = ClsModule.forRoot({ global: true });

    const sut = withoutClsEnhancers(original);

    // When nestjs-cls stops registering them, this workaround can go.
    expect(providedTokens(original)).toEqual(expect.arrayContaining([APP_GUARD, APP_INTERCEPTOR]));
    expect(providedTokens(sut)).not.toContain(APP_GUARD);
    expect(providedTokens(sut)).not.toContain(APP_INTERCEPTOR);
  });

  it('should still provide a ClsService that opens contexts', async () => {
    const module = await Test.createTestingModule({
      imports: [withoutClsEnhancers(ClsModule.forRoot({ global: true }))],
    }).compile();
    const cls = module.get(ClsService);

    const seen = await cls.run(async () => {
      cls.set('key', 'value');
      await Promise.resolve();
      return cls.get<string>('key');
    });

    expect(seen).toBe('value');
    expect(cls.isActive()).toBe(false);
    await module.close();
  });
});
