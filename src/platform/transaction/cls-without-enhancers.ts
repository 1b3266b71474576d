import { DynamicModule, Provider } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';

const ENHANCERS: readonly unknown[] = [APP_GUARD, APP_INTERCEPTOR];

function isEnhancer(provider: Provider): boolean {
  return typeof provider === 'object' && ENHANCERS.includes(provider.provide);
}

/**
 * ClsModule.forRoot without the global guard and interceptor nestjs-cls registers even when neither
 * is mounted. Unmounted they do nothing, yet a global interceptor puts every request of every route
 * through Nest's interceptor chain (rxjs, AsyncResource.bind). Nothing here needs a CLS context per
 * request: TransactionRunner (through TransactionHost) and @Transactional open one around each
 * transaction, and workers use @UseCls.
 */
export function withoutClsEnhancers(module: DynamicModule): DynamicModule {
  return {
    ...module,
    imports: module.imports?.map((imported) =>
      'module' in imported && Array.isArray(imported.providers)
        ? { ...imported, providers: imported.providers.filter((provider) => !isEnhancer(provider)) }
        : imported,
    ),
  };
}
