/**
 * The guest's /init (busybox sh, runs INSIDE the VM as PID 1) and its /sbin/modprobe shim. /init
 * loads the 9p/overlay modules, mounts the host's root read-only over 9p under a tmpfs overlay (a
 * writable root whose writes vanish at power-off), binds the unpacked kernel's modules at
 * /lib/modules, mounts the job share at /xfer, brings `lo` up, then runs each job step
 * (`/xfer/steps/<i>/argv`, one argument a line, optional `stdin`) with `chroot` and writes its
 * `stdout`, `stderr` and `rc` beside it, and powers off. The host never runs these through a shell.
 */

/** insmod order: virtio_ring before virtio, or 9p finds no transport. */
export const BOOT_MODULES = [
  'virtio_ring', 'virtio', 'virtio_pci_legacy_dev', 'virtio_pci_modern_dev', 'virtio_pci',
  '9pnet', '9pnet_virtio', 'netfs', 'fscache', '9p', 'overlay',
] as const;

/** Bumped whenever initScript or the shim changes: names the cached initramfs. */
export const INIT_VERSION = 2;

/** The marker /init writes when every step has run (absent: the boot or a mount failed). */
export const DONE_MARKER = 'done';

export function initScript(hostModulesDir: string): string {
  if (/[\s'"\\$`]/.test(hostModulesDir)) throw new Error(`unsupported modules path ${JSON.stringify(hostModulesDir)}`);
  const version = hostModulesDir.split('/').pop() as string;
  return [
    '#!/bin/busybox sh',
    '/bin/busybox --install -s /bin',
    'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev',
    ...BOOT_MODULES.map((m) => `insmod /modules/${m}.ko || echo "init: insmod ${m} failed"`),
    'mkdir -p /lower /rw /mnt',
    'mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot /lower || poweroff -f',
    'mount -t tmpfs tmpfs /rw && mkdir -p /rw/upper /rw/work',
    'mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /mnt || poweroff -f',
    'mount --bind /proc /mnt/proc; mount --bind /sys /mnt/sys; mount --bind /dev /mnt/dev',
    `mkdir -p /mnt/lib/modules/${version} && mount --bind /mnt${hostModulesDir} /mnt/lib/modules/${version}`,
    'mkdir -p /mnt/xfer && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 xfer /mnt/xfer || poweroff -f',
    'ip link set lo up',
    'i=0',
    'while [ -f /mnt/xfer/steps/$i/argv ]; do',
    '  d=/mnt/xfer/steps/$i',
    '  set --',
    '  while IFS= read -r a; do set -- "$@" "$a"; done < $d/argv',
    '  in=/dev/null; [ -f $d/stdin ] && in=$d/stdin',
    '  chroot /mnt "$@" < $in > $d/stdout 2> $d/stderr',
    '  echo $? > $d/rc',
    '  i=$((i + 1))',
    'done',
    `echo ok > /mnt/xfer/${DONE_MARKER}`,
    'sync',
    'poweroff -f',
    '',
  ].join('\n');
}

/** Kernel module auto-loading (ipvsadm → ip_vs, ipset → ip_set_*) through the host's modprobe. */
export const MODPROBE_SHIM = '#!/bin/busybox sh\nexec /bin/busybox chroot /mnt /sbin/modprobe "$@"\n';
