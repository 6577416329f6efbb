// What a terminal shows: a command in a pseudo-terminal (python3's pty, the window size set with
// TIOCSWINSZ), its output replayed into @xterm/headless, a real terminal emulator, so that tests
// read the screen a user would see: every line, and whether the terminal had to wrap it.
import { spawn } from 'node:child_process';
import xterm from '@xterm/headless';
import { FERRY_BIN } from './cli.js';

// The child waits for the window size before it starts; what the test writes to the pty (Ctrl-C
// is \x03) reaches the command as a keyboard would send it, through the terminal driver.
const PTY = `
import os, pty, sys, fcntl, termios, struct, select
cols = int(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 24, cols, 0, 0))
out = sys.stdout.buffer
inp = sys.stdin.fileno()
reading = True
while True:
    ready, _, _ = select.select([fd, inp] if reading else [fd], [], [])
    if inp in ready:
        data = os.read(inp, 1024)
        if data:
            os.write(fd, data)
        else:
            reading = False
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        out.write(data)
        out.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

export interface TerminalRun {
  code: number | null;
  /** Everything written to the terminal, escapes and all. */
  output: string;
}

export interface Session {
  /** Resolves once the output holds `pattern`. */
  waitFor(pattern: RegExp): Promise<void>;
  /** Types into the terminal (\x03 is Ctrl-C). */
  type(keys: string): void;
  done: Promise<TerminalRun>;
}

/** `ferry ARGS` in a terminal `cols` wide. */
export function inTerminal(cols: number, args: string[], env: Record<string, string>): Session {
  return commandInTerminal(cols, [process.execPath, FERRY_BIN, ...args], env);
}

/** Any command (argv) in a terminal `cols` wide: a shell script with `['bash', '-c', script]`. */
export function commandInTerminal(cols: number, argv: string[], env: Record<string, string>, cwd?: string): Session {
  const child = spawn('python3', ['-c', PTY, String(cols), 'sh', '-c', 'sleep 0.3; exec "$0" "$@"', ...argv], {
    env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', TERM: 'xterm', ...env },
    ...(cwd ? { cwd } : {}),
  });
  let output = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.on('data', (d) => {
    output += d;
    for (const w of [...waiters]) if (w.pattern.test(output)) waiters.splice(waiters.indexOf(w), 1), w.resolve();
  });
  const done = new Promise<TerminalRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      for (const w of waiters) w.resolve();
      resolve({ code, output });
    });
  });
  return {
    waitFor: (pattern) => (pattern.test(output) ? Promise.resolve() : new Promise((resolve) => waiters.push({ pattern, resolve }))),
    type: (keys) => void child.stdin.write(keys),
    done,
  };
}

export interface ScreenLine {
  text: string;
  /** The terminal wrapped the line before this one onto this one: it did not fit. */
  wrapped: boolean;
}

/** The screen and its scrollback after `output`, line by line, as a `cols`-wide terminal shows it. */
export function screen(output: string, cols: number): Promise<ScreenLine[]> {
  const term = new xterm.Terminal({ cols, rows: 24, scrollback: 100_000, allowProposedApi: true });
  return new Promise((resolve) => {
    term.write(output, () => {
      const buffer = term.buffer.active;
      const lines: ScreenLine[] = [];
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i);
        if (line) lines.push({ text: line.translateToString(true), wrapped: line.isWrapped });
      }
      while (lines.length && lines.at(-1)?.text === '') lines.pop();
      term.dispose();
      resolve(lines);
    });
  });
}

/** What each redraw writes on the line: text between cursor moves, carriage returns and newlines. */
export function frames(output: string): string[] {
  // eslint-disable-next-line no-control-regex
  return output.split(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]|[\r\n]+/).filter((f) => f.trim() !== '');
}
