import { readFile } from 'node:fs/promises';
import {
  ConfigError,
  applyFlags,
  decodeConfiguration,
  defaultConfiguration,
  formatFieldError,
  setEffectiveFeatureGates,
  validateConfiguration,
  type KubeProxyConfiguration,
  type ParsedFlags,
} from '@kube-proxy/core';

/**
 * The effective configuration: the --config file (strictly decoded, defaulted) or the defaults, then
 * the flags with upstream's precedence, then validation. Throws ConfigError naming the field.
 */
export async function loadConfiguration(parsed: ParsedFlags): Promise<{ config: KubeProxyConfiguration; fileText?: string }> {
  const file = parsed.options.configFile;
  let base: KubeProxyConfiguration;
  let text: string | undefined;
  if (file) {
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError('', `cannot read config file: ${(err as Error).message}`, file);
    }
    base = decodeConfiguration(text, file);
  } else {
    base = defaultConfiguration();
  }
  const cfg = applyFlags(base, parsed, Boolean(file));
  const errors = validateConfiguration(cfg);
  if (errors.length > 0) throw new InvalidConfigurationError(errors.map(formatFieldError), file);
  // The validated gates become the process's (upstream's DefaultFeatureGate): core's service info
  // reads AllowServiceExternalIPs there, for every backend and plugin alike.
  setEffectiveFeatureGates(cfg.featureGates);
  return text === undefined ? { config: cfg } : { config: cfg, fileText: text };
}

/** Validation found problems: every one is reported at once, one `field: reason` per line. */
export class InvalidConfigurationError extends Error {
  constructor(
    readonly problems: readonly string[],
    readonly source?: string,
  ) {
    super(`invalid configuration${source ? ` in ${source}` : ''}:\n  ${problems.join('\n  ')}`);
  }
}
