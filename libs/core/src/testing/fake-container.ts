import type { BackendPlugin } from '../contracts/backend-plugin.js';

/** The tsyringe container type, as the plugin contract spells it. */
export type PluginContainer = Parameters<BackendPlugin['register']>[0];

/**
 * For backend tests: the part of a DI container a plugin uses (resolve, isRegistered, register
 * with useValue), over a plain map, so a backend's tests need no tsyringe of their own.
 */
export function fakeContainer(entries: Iterable<readonly [symbol, unknown]> = []): { container: PluginContainer; values: Map<unknown, unknown> } {
  const values = new Map<unknown, unknown>(entries);
  const container = {
    resolve: (token: unknown) => {
      if (!values.has(token)) throw new Error(`unregistered ${String(token)}`);
      return values.get(token);
    },
    isRegistered: (token: unknown) => values.has(token),
    register: (token: unknown, provider: { useValue: unknown }) => {
      values.set(token, provider.useValue);
      return container;
    },
  };
  return { container: container as unknown as PluginContainer, values };
}
