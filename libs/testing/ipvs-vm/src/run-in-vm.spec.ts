import { qemuArgs } from './run-in-vm.js';
import type { VmImage } from './prepare.js';

const image: VmImage = {
  kernel: { version: '6.1.0-57-amd64', root: '/c/r', vmlinuz: '/c/r/boot/vmlinuz-6.1.0-57-amd64', modulesDir: '/c/r/lib/modules/6.1.0-57-amd64' },
  initrd: '/c/initrd-v1.cpio',
  installed: [],
  durationMs: 0,
};

describe('qemuArgs', () => {
  const args = qemuArgs(image, '/tmp/x', '/tmp/x/console.log', { steps: [], timeoutSeconds: 60 });

  it('bounds the boot with timeout and runs QEMU niced, under TCG, on one vCPU', () => {
    expect(args.slice(0, 7)).toEqual(['-k', '5', '60', 'nice', '-n', '10', 'qemu-system-x86_64']);
    expect(args.join(' ')).toContain('-accel tcg -m 1536 -smp 1 -nodefaults -no-user-config -display none -no-reboot');
  });

  it('shares the host root read-only and the job dir writable over 9p', () => {
    expect(args).toContain('local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap');
    expect(args).toContain('local,path=/tmp/x,mount_tag=xfer,security_model=none,multidevs=remap');
    expect(args[args.indexOf('-kernel') + 1]).toBe(image.kernel.vmlinuz);
    expect(args[args.indexOf('-initrd') + 1]).toBe(image.initrd);
  });
});
