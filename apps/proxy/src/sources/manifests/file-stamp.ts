import { stat } from 'node:fs/promises';

/**
 * What a stat says about a file's content without reading it: device, inode (an atomic rename or a
 * ConfigMap volume's symlink swap gives a new one), size, and modification and change times in
 * nanoseconds (ctime also moves on writes that restore mtime). Equal stamps mean the file was not
 * written; undefined when the file is gone or cannot be stat'ed.
 */
export async function fileStamp(file: string): Promise<string | undefined> {
  try {
    const st = await stat(file, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}
