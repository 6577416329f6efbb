/** A header as tar-stream gives it at run time: its own types leave out what PAX, links and offsets add. */
export interface TarHeader {
  name: string;
  size?: number | undefined;
  type: string | null;
  mtime?: Date | undefined;
  linkname?: string | null | undefined;
  /** The PAX records that applied to this entry (tar-stream decodes them as UTF-8). */
  pax?: Record<string, string> | null | undefined;
  /** Where the entry's bytes start in the uncompressed archive. */
  byteOffset?: number | undefined;
}

/** An entry as tar-stream's extract yields it (a streamx stream, not Node's). */
export interface TarEntry extends AsyncIterable<Buffer> {
  header: TarHeader;
  resume(): unknown;
  on(event: 'end', listener: () => void): unknown;
}

/** Reads past an entry nobody needs. */
export function drain(entry: TarEntry): Promise<void> {
  return new Promise((resolve) => {
    entry.on('end', () => resolve());
    entry.resume();
  });
}
