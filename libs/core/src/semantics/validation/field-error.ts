/**
 * What a validator reports: one problem with one field, the field written as a path into the object as
 * kubectl shows it (`spec.ports[0].name`, `metadata.labels[kubernetes.io/service-name]`), so an
 * operator can find it in the manifest. Validators return a list; an empty list means "valid".
 */
export interface FieldError {
  /** Path of the offending field, e.g. "spec.ports[0].name". */
  readonly field: string;
  /** Why it is invalid, in the API server's terms ("must be no more than 63 characters", …). */
  readonly message: string;
}

/** `field: message` per error, joined with "; " (one line, for a log field). */
export function describeFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => `${e.field}: ${e.message}`).join('; ');
}

/** Collects errors under a base path; `at(child)` appends `.child`, `index(i)` `[i]`, `key(k)` `[k]`. */
export class FieldPath {
  constructor(readonly path: string) {}

  at(child: string): FieldPath {
    return new FieldPath(this.path === '' ? child : `${this.path}.${child}`);
  }

  index(i: number): FieldPath {
    return new FieldPath(`${this.path}[${i}]`);
  }

  key(k: string): FieldPath {
    return new FieldPath(`${this.path}[${k}]`);
  }

  error(message: string): FieldError {
    return { field: this.path, message };
  }
}

/** The root of an object's fields. */
export const ROOT = new FieldPath('');
