/**
 * One problem with one configuration field. `field` is the path as written in the v1alpha1 file
 * (`iptables.masqueradeBit`, `nodePortAddresses[1]`), so operators can find it in their YAML.
 */
export interface ConfigFieldError {
  readonly field: string;
  readonly message: string;
  /** The offending value, when there is one worth showing. */
  readonly value?: unknown;
}

export function formatFieldError(error: ConfigFieldError): string {
  return error.field ? `${error.field}: ${error.message}` : error.message;
}

/** One line per error, for logs and the CLI's exit message. */
export function formatFieldErrors(errors: readonly ConfigFieldError[]): string {
  return errors.map(formatFieldError).join('\n');
}

/**
 * A configuration that cannot be used: thrown by decodeConfiguration (and by the CLI for validation
 * failures). `message` is `field: detail`; `detail` is the bare reason; `source` names the file.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly field: string;
  readonly detail: string;
  readonly source?: string;

  constructor(field: string, detail: string, source?: string) {
    super(field ? `${field}: ${detail}` : detail);
    this.field = field;
    this.detail = detail;
    if (source !== undefined) this.source = source;
  }

  /** `source: field: detail`, for a message that stands on its own. */
  describe(): string {
    return this.source ? `${this.source}: ${this.message}` : this.message;
  }
}
