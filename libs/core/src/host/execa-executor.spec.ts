import { ExecaCommandExecutor, spawnFdHeadroom } from './execa-executor.js';

// The executor is the one place that really spawns processes; these tests use /bin/sh and /bin/echo.
describe('ExecaCommandExecutor', () => {
  const exec = new ExecaCommandExecutor();

  it('returns stdout, stderr and the exit code, keeping the final newline', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('passes arguments verbatim, never through a shell', async () => {
    const r = await exec.run('/bin/echo', ['$(id)', '; rm -rf /', '*', '"quoted"']);
    expect(r.stdout).toBe('$(id) ; rm -rf / * "quoted"\n');
    expect(r.exitCode).toBe(0);
  });

  it('feeds input to stdin', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'wc -l'], { input: 'a\nb\nc\n' });
    expect(r.stdout.trim()).toBe('3');
  });

  it('writes chunked input to stdin in order, chunk boundaries anywhere (even inside a line)', async () => {
    const chunks = [Buffer.from('*nat\n-A X'), Buffer.from(' -j Y\n'), new Uint8Array(0), Buffer.from('COMMIT\n')];
    const r = await exec.run('/bin/cat', [], { input: chunks });
    expect(r).toEqual({ exitCode: 0, stdout: '*nat\n-A X -j Y\nCOMMIT\n', stderr: '' });
  });

  it('survives a child that exits without reading its chunked input', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'exit 5'], { input: [Buffer.alloc(4_000_000), Buffer.alloc(4_000_000)] });
    expect(r.exitCode).toBe(5);
  });

  it('survives a child that exits without reading its input', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'exit 4'], { input: 'x'.repeat(1_000_000) });
    expect(r.exitCode).toBe(4);
  });

  it('gives a child without input an empty stdin rather than leaving it waiting', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'cat; echo done'], { timeoutMs: 5000 });
    expect(r.stdout).toBe('done\n');
  });

  it('merges env over the process environment', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'echo "$KP_TEST_VAR:$PATH"'], { env: { KP_TEST_VAR: 'set' } });
    expect(r.stdout.startsWith('set:')).toBe(true);
    expect(r.stdout.trim().length).toBeGreaterThan('set:'.length);
  });

  it('reports a missing binary as spawnError with no exit code', async () => {
    const r = await exec.run('/nonexistent/kp-no-such-tool', ['--version']);
    expect(r.exitCode).toBeNull();
    expect(r.spawnError).toContain('ENOENT');
  });

  it('kills on timeout and says so', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'exec sleep 5'], { timeoutMs: 100 });
    expect(r.exitCode).toBeNull();
    expect(r.spawnError).toBeUndefined();
    expect(r.stderr).toContain('killed after the 100ms timeout');
  });

  it('returns a null exit code when the child dies of a signal', async () => {
    const r = await exec.run('/bin/sh', ['-c', 'kill -9 $$']);
    expect(r.exitCode).toBeNull();
    expect(r.spawnError).toBeUndefined();
  });

  it('refuses to spawn, without crashing, when the process is out of file descriptors', async () => {
    const starved = new ExecaCommandExecutor(() => 'EMFILE');
    const r = await starved.run('/bin/sh', ['-c', 'exit 0']);
    expect(r).toEqual({ exitCode: null, stdout: '', stderr: '', spawnError: 'spawn /bin/sh EMFILE: not enough free file descriptors to start it' });
  });

  it('finds headroom in a normal process', () => {
    expect(spawnFdHeadroom()).toBeUndefined();
  });
});
