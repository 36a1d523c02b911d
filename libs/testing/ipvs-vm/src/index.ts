/**
 * A real IPVS kernel for tests on hosts whose own kernel has none: `prepare` (packages, Debian's
 * kernel, initramfs; cached) and `runInVm` (one QEMU boot running a job's steps via chroot over the
 * host's root). See this library's README.md and docs/ipvs-vm.md.
 */
export { HOST_PACKAGES, VmUnavailableError, ensureHostPackages } from './host-packages.js';
export { BOOT_MODULES, INIT_VERSION } from './init-script.js';
export { resolveKernelPackage, unpackKernel, type UnpackedKernel } from './kernel.js';
export { DEFAULT_CACHE_DIR, cacheDir, prepare, prepareOrReason, type VmImage } from './prepare.js';
export { qemuArgs, runInVm, type VmJob, type VmRun, type VmStep, type VmStepResult } from './run-in-vm.js';
