import type { FieldError } from './field-error.js';

/**
 * The validators' promise never to throw, kept in one place: they walk fields with type tests, but an
 * object that still makes one fail (a getter that throws, say) is reported as invalid, not propagated.
 */
export function guarded(validate: () => FieldError[]): readonly FieldError[] {
  try {
    return validate();
  } catch (err) {
    return [{ field: '<object>', message: `cannot be validated: ${err instanceof Error ? err.message : String(err)}` }];
  }
}
