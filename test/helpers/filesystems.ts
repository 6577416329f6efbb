// Real file systems for tests: NTFS through ntfs-3g with `windows_names` (Windows' own rules), and
// exFAT through exfat-fuse on a loop device, each on an image file in a temp folder. Mounting needs
// root and /dev/fuse (our machines and CI have both; .ci/run installs the packages). Where a mount
// is refused, `mountable` says why: a test then fails under CI and is skipped with the reason
// elsewhere.
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type FsKind = 'ntfs' | 'exfat';

export interface Mounted {
  kind: FsKind;
  dir: string;
  unmount(): Promise<void>;
}

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
}

/** Makes an image of `sizeMiB` and mounts it; throws with the tool's words when it cannot. */
export async function mount(kind: FsKind, sizeMiB = 96, opts: { readOnly?: boolean } = {}): Promise<Mounted> {
  const base = await mkdtemp(join(tmpdir(), `ferry-${kind}-`));
  const image = join(base, `${kind}.img`);
  const dir = join(base, 'mnt');
  await mkdir(dir);
  run('truncate', ['-s', `${sizeMiB}M`, image]);
  let loop: string | undefined;
  try {
    if (kind === 'ntfs') {
      run('mkntfs', ['-F', '-Q', image]);
      run('ntfs-3g', ['-o', opts.readOnly ? 'windows_names,ro' : 'windows_names', image, dir]);
    } else {
      run('mkfs.exfat', [image]);
      loop = run('losetup', ['-f', '--show', image]).trim();
      run('mount.exfat-fuse', [...(opts.readOnly ? ['-o', 'ro'] : []), loop, dir]);
    }
  } catch (err) {
    if (loop) run('losetup', ['-d', loop]);
    await rm(base, { recursive: true, force: true });
    throw err;
  }
  return {
    kind,
    dir,
    async unmount() {
      try {
        run('umount', [dir]);
      } catch {
        run('fusermount', ['-u', '-z', dir]);
      }
      if (loop) run('losetup', ['-d', loop]);
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Whether `kind` can be mounted here: undefined when it can, else why not. */
export async function mountable(kind: FsKind): Promise<string | undefined> {
  try {
    const m = await mount(kind, 16);
    await m.unmount();
    return undefined;
  } catch (err) {
    return `${kind} cannot be mounted here: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`;
  }
}
