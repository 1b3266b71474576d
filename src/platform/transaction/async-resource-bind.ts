import { AsyncResource } from 'node:async_hooks';

/**
 * AsyncResource.bind as Node 20 has it, minus the deprecated `asyncResource` property (DEP0172) it
 * defines on every function it returns. Defining that property goes through util.deprecate twice,
 * about 12 µs a call where the binding itself takes 0.2 µs (nodejs/node#58218; later Node lines
 * removed the property, #58618). Nest's interceptor chain binds twice per request on every
 * intercepted route, the notify route's transaction included.
 *
 * The binding is Node's own: a new AsyncResource of the caller's execution context, whose scope
 * the function runs in, with `this` (or thisArg) and the arguments passed through.
 */
function bindWithoutDeprecatedProperty(
  fn: (...args: unknown[]) => unknown,
  type?: string,
  thisArg?: unknown,
): (...args: unknown[]) => unknown {
  const resource = new AsyncResource(type || fn.name || 'bound-anonymous-fn');
  return function bound(this: unknown, ...args: unknown[]) {
    return resource.runInAsyncScope(fn, thisArg === undefined ? this : thisArg, ...args);
  };
}

/** Replaces the static AsyncResource.bind for the whole process; calling it again changes nothing. */
export function bindAsyncResourcesWithoutDeprecatedProperty(): void {
  AsyncResource.bind = bindWithoutDeprecatedProperty as typeof AsyncResource.bind;
}
