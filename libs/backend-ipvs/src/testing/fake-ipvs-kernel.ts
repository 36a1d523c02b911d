/**
 * FakeIpvsKernel, the name the proxier's specs use for the in-memory kernel. It is the very class
 * --dry-run runs on (kernel/memory-ipvs-kernel.ts, production code), so the specs exercise exactly
 * the text and the tool behaviour the dry-run shows; this module only gives it its test name.
 */
export { MemoryIpvsKernel as FakeIpvsKernel, type IpvsKernelCall, type IpvsKernelDump } from '../kernel/memory-ipvs-kernel.js';
