import { ConfigError, FlagError } from '@kube-proxy/core';
import { ModeSelectionError } from '../mode/select-mode.js';
import { PluginContractError } from '../registry/backend-registry.js';
import { KubeClientConfigError, NodeWaitError } from '../sources/api/api-source-errors.js';
import { ServerBindError } from '../agent/index.js';
import { InvalidConfigurationError } from './load-configuration.js';

/** A failure the CLI reports as one line (no stack) with its exit code. */
export interface CliFailure {
  readonly message: string;
  readonly code: number;
}

/** The expected failures of a run (bad flags, configuration, mode, plugin, API client); undefined for a bug. */
export function knownFailure(err: unknown): CliFailure | undefined {
  if (err instanceof FlagError) return { message: `${err.message} (see --help)`, code: 1 };
  if (err instanceof ConfigError) return { message: `invalid configuration: ${err.describe()}`, code: 1 };
  if (err instanceof InvalidConfigurationError) return { message: err.message, code: 1 };
  if (err instanceof ModeSelectionError) return { message: err.message, code: err.exitCode };
  if (err instanceof PluginContractError || err instanceof KubeClientConfigError || err instanceof NodeWaitError || err instanceof ServerBindError) {
    return { message: err.message, code: 1 };
  }
  return undefined;
}
