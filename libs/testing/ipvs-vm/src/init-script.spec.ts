import { BOOT_MODULES, DONE_MARKER, MODPROBE_SHIM, initScript } from './init-script.js';

describe('initScript', () => {
  const script = initScript('/var/cache/kp/6.1.0-57-amd64/root/lib/modules/6.1.0-57-amd64');

  it('loads virtio_ring before virtio and every boot module before mounting the host root', () => {
    const insmods = script.split('\n').filter((l) => l.startsWith('insmod '));
    expect(insmods.map((l) => l.split(' ')[1])).toEqual(BOOT_MODULES.map((m) => `/modules/${m}.ko`));
    expect(BOOT_MODULES.indexOf('virtio_ring')).toBeLessThan(BOOT_MODULES.indexOf('virtio'));
    expect(script.indexOf('insmod /modules/overlay.ko')).toBeLessThan(script.indexOf('hostroot /lower'));
  });

  it('mounts the host root read-only over 9p under a tmpfs overlay and binds the unpacked modules', () => {
    expect(script).toContain('mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot /lower');
    expect(script).toContain('mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /mnt');
    expect(script).toContain('mount --bind /mnt/var/cache/kp/6.1.0-57-amd64/root/lib/modules/6.1.0-57-amd64 /mnt/lib/modules/6.1.0-57-amd64');
  });

  it('runs each step with chroot from its argv file and ends with the done marker and a power-off', () => {
    expect(script).toContain('chroot /mnt "$@" < $in > $d/stdout 2> $d/stderr');
    expect(script.trimEnd().endsWith(`echo ok > /mnt/xfer/${DONE_MARKER}\nsync\npoweroff -f`)).toBe(true);
  });

  it('refuses a modules path the guest shell would split or expand', () => {
    expect(() => initScript('/tmp/a b/lib/modules/6.1')).toThrow(/unsupported modules path/);
    expect(() => initScript('/tmp/$x/lib/modules/6.1')).toThrow(/unsupported modules path/);
  });

  it('hands kernel module requests to the host modprobe inside the overlay root', () => {
    expect(MODPROBE_SHIM).toBe('#!/bin/busybox sh\nexec /bin/busybox chroot /mnt /sbin/modprobe "$@"\n');
  });
});
