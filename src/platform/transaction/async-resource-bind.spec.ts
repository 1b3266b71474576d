import { AsyncLocalStorage, AsyncResource, executionAsyncId, triggerAsyncId } from 'node:async_hooks';
import { bindAsyncResourcesWithoutDeprecatedProperty } from './async-resource-bind';

describe(bindAsyncResourcesWithoutDeprecatedProperty.name, () => {
  const storage = new AsyncLocalStorage<string>();

  beforeAll(() => bindAsyncResourcesWithoutDeprecatedProperty());

  it('should bind without the deprecated asyncResource property', () => {
    const bound = AsyncResource.bind(() => 1);

    expect(Object.getOwnPropertyNames(bound)).not.toContain('asyncResource');
  });

  it('should run the function in the context it was bound in, wherever it is called', async () => {
    const bound = storage.run('request 1', () => AsyncResource.bind(() => storage.getStore()));

    const seen = await storage.run('request 2', async () => {
      await Promise.resolve();
      return bound();
    });

    expect(seen).toBe('request 1');
    expect(storage.getStore()).toBeUndefined();
  });

  it('should pass this, the arguments and the result through', () => {
    const target = { base: 40 };
    const add = function (this: typeof target, a: number, b: number): number {
      return this.base + a + b;
    };

    expect(AsyncResource.bind<typeof add, typeof target>(add).call(target, 1, 1)).toBe(42);
    expect(AsyncResource.bind(add, 'add', { base: 0 }).call(target, 1, 1)).toBe(2);
  });

  it('should run each bound function in its own async resource, triggered by the binder', () => {
    const binder = executionAsyncId();
    const bound = AsyncResource.bind(() => ({ id: executionAsyncId(), trigger: triggerAsyncId() }));

    const first = bound();
    const second = bound();

    expect(first).toEqual(second);
    expect(first.id).not.toBe(binder);
    expect(first.trigger).toBe(binder);
  });
});
