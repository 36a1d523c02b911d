// Preload for the memory profile (node --import): writes a heap snapshot of a `--dry-run --once`
// process at the moment it writes its output, when everything the run built (decoded objects, core's
// maps, the rendered payload, the dry-run table model, the output text) is still live. The snapshot
// goes to $KP_HEAP_SNAPSHOT before the first stdout write of at least 100 kB (the first piece of the dry-run tables).
// Plain Node; only used by tools/bench/src/memory/memory-profile.ts.
import { writeHeapSnapshot } from 'node:v8';

const target = process.env.KP_HEAP_SNAPSHOT;
if (target) {
  const write = process.stdout.write.bind(process.stdout);
  let taken = false;
  process.stdout.write = (chunk, ...rest) => {
    if (!taken && chunk.length >= 100_000) {
      taken = true;
      writeHeapSnapshot(target);
    }
    return write(chunk, ...rest);
  };
}
