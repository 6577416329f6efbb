// Folders made beside the listing, not in its way: a folder whose creation waits out a retry
// stalls only the files that go into it (they await it in the destination's place()), never the
// lister. At most `limit()` are in the making at once; a failure surfaces at the end, or sooner
// through a file of that folder.
import type { Destination, Placement } from './contract.js';

export class FolderMaker {
  private readonly making = new Set<Promise<void>>();
  private failure: unknown;

  constructor(
    private readonly destination: Destination<Placement>,
    private readonly limit: () => number,
    /** Waited before each folder: a run that no longer holds its lease makes none. */
    private readonly gate: (() => Promise<void>) | undefined,
  ) {}

  async make(key: string): Promise<void> {
    while (this.making.size >= this.limit()) await Promise.race(this.making);
    const made: Promise<void> = Promise.resolve(this.gate?.()).then(() => this.destination.ensureFolder(key)).then(
      () => void this.making.delete(made),
      (err: unknown) => {
        this.failure ??= err;
        this.making.delete(made);
      },
    );
    this.making.add(made);
  }

  /** Every folder begun, made or failed; throws the first failure. */
  async made(): Promise<void> {
    await Promise.all(this.making);
    if (this.failure !== undefined) throw this.failure;
  }

  /** Waits for the folders in the making, whatever became of them (a run that ends in error). */
  async drained(): Promise<void> {
    await Promise.all(this.making);
  }
}
