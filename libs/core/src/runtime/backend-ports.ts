import type { DependencyContainer } from 'tsyringe';
import { CLOCK, type Clock } from '../host/clock.js';
import { COMMAND_EXECUTOR, type CommandExecutor } from '../host/command-executor.js';
import { LOGGER, type Logger } from '../host/logger.js';
import { SYSCTL, type Sysctl } from '../host/sysctl.js';
import { resolveObservers, type ProxierObservers } from './observers.js';

/** What a kernel backend resolves from the host app's container to build its proxiers. */
export interface BackendPorts {
  /** The host app's logger, as a child tagged `backend: NAME`. */
  readonly logger: Logger;
  readonly clock: Clock;
  readonly executor: CommandExecutor;
  readonly sysctl: Sysctl;
  /** Health, metrics and health-check ports, when the host app registered them. */
  readonly observers: ProxierObservers;
}

/** The ports every kernel backend's register() needs (the container holds them, see BackendPlugin). */
export function resolveBackendPorts(container: DependencyContainer, backend: string): BackendPorts {
  return {
    logger: container.resolve<Logger>(LOGGER).child({ backend }),
    clock: container.resolve<Clock>(CLOCK),
    executor: container.resolve<CommandExecutor>(COMMAND_EXECUTOR),
    sysctl: container.resolve<Sysctl>(SYSCTL),
    observers: resolveObservers(container),
  };
}
