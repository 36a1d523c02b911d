/**
 * All of stdin as text, read as a stream: the guest scripts get their job on stdin, which is a
 * file for the first (run-in-vm's step input) but a non-blocking pipe for a round started by
 * `run` (readFileSync(0) fails there with EAGAIN).
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
