import type { IPFamily } from '../model/protocol.js';
import type { KernelObject } from '../../contracts/packet-trace.js';
import type { ServiceExplanation } from './service-explanation.js';

export interface CompareOptions {
  /** The families the kernel objects were read for (default: every family of the explanation). */
  readonly families?: readonly IPFamily[];
}

/**
 * The differences between what the Service's objects say the kernel should hold (`explanation`) and
 * what it holds (`objects`, a mode tracer's objectsOf for the Service), in operator words; [] when
 * they agree.
 */
export function compareWithKernel(explanation: ServiceExplanation, objects: readonly KernelObject[], options: CompareOptions = {}): string[] {
  void explanation;
  void objects;
  void options;
  throw new Error('compareWithKernel: not implemented yet');
}
