// Whether a process of this host is still there: signal 0 tests for it without touching it.
// EPERM means it exists and belongs to another user.

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
