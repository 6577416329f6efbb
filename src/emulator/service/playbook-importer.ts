// Runs playbook import tasks in the background, one at a time: reads the uploaded archive,
// creates the playbook and everything under it in one transaction, and tells the outcome
// (success or why it failed) through a notification naming the task.
import { basename } from 'node:path';
import { type EmulatorContext, HttpError, type MetadataDefinition } from '../context.js';
import type { MetadataValueInput } from './metadata-values.js';
import { type ArchiveFile, type ArchiveMetadataValue, type PlaybookArchive, readPlaybookArchive } from './playbook-archive.js';
import { categoryCondition, newReferenceMaterial, playbookMetadataValues, templateColumn } from './playbook-inputs.js';
import type { AssemblyRecord } from '../state/assemblies.js';
import type { ImportTaskRecord } from '../state/playbook-imports.js';
import { newPlaybookRecord } from '../state/playbooks.js';
import type { PlaybookStores } from '../state/playbook-stores.js';

/** The import cannot be applied to this tenant (e.g. a metadata definition it does not have). */
class ImportError extends Error {}

export class PlaybookImporter {
  private tail: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly ctx: EmulatorContext,
    private readonly stores: PlaybookStores,
    private readonly logger: { error(fields: object, message: string): void },
  ) {}

  enqueue(task: ImportTaskRecord): void {
    const generation = this.ctx.gate.now;
    // run() reports an import's own failures by notification; what escapes it (the emulator's own
    // failure) is logged, and must not stop the queue.
    this.tail = this.tail
      .then(() => this.run(task, generation))
      .catch((error: unknown) => this.logger.error({ err: error, taskIdentifier: task.taskIdentifier }, 'playbook import crashed'));
  }

  /** Waits for the running task; queued ones stay queued (and resume after a restart with the same data). */
  async close(): Promise<void> {
    this.closed = true;
    await this.tail;
  }

  private async run(task: ImportTaskRecord, generation: number): Promise<void> {
    if (this.closed) return;
    const { ctx, stores } = this;
    // A task of a state since reset or restored is not this state's (the new one's are enqueued anew).
    if (!ctx.gate.stillCurrent(generation)) return;
    stores.imports.running(task.taskIdentifier);
    let archive: PlaybookArchive | undefined;
    try {
      const zip = ctx.blobs.get(task.blobKey);
      if (!zip) throw new ImportError('The uploaded archive is no longer stored.');
      archive = await readPlaybookArchive(zip, ctx.blobs, (n) => `playbook-imports/${task.taskIdentifier}/${n}`);
      if (!ctx.gate.stillCurrent(generation)) {
        for (const file of archive.files.values()) ctx.blobs.delete(file.blobKey);
        return;
      }
      const imported = archive;
      const used = ctx.db.transaction(() => this.apply(task, imported))();
      for (const file of archive.files.values()) if (!used.has(file.blobKey)) ctx.blobs.delete(file.blobKey);
    } catch (error) {
      for (const file of archive?.files.values() ?? []) ctx.blobs.delete(file.blobKey);
      if (!ctx.gate.stillCurrent(generation)) return;
      const reason = error instanceof HttpError ? (error.detail ?? error.title) : (error as Error).message;
      ctx.db.transaction(() => {
        stores.imports.failed(task.taskIdentifier, reason);
        ctx.notify(task.tenant, {
          type: 'playbookImportFailed',
          title: 'Playbook import failed',
          message: reason,
          resourceIdentifiers: { taskObjectIdentifier: task.taskIdentifier },
        });
      })();
    }
    ctx.blobs.delete(task.blobKey);
  }

  /** Creates everything the archive describes; returns the blob keys now owned by assemblies. */
  private apply(task: ImportTaskRecord, { manifest, files }: PlaybookArchive): Set<string> {
    const { ctx, stores } = this;
    const now = ctx.now();
    const playbook = newPlaybookRecord(manifest.playbook, { objectIdentifier: ctx.newId(), tenant: task.tenant, dateAdded: now, owner: task.owner });
    stores.playbooks.create(playbook);
    const definitions = ctx.organizationMetadataDefinitions(task.tenant);
    const metadata = manifest.metadata.map((value, index) => resolveMetadata(value, definitions, `metadata[${index}]`));
    const lookup = (id: string) => ctx.organizationMetadata(task.tenant, id);
    for (const value of playbookMetadataValues(metadata, lookup, ctx.newId)) stores.metadata.add(playbook.objectIdentifier, value);
    for (const input of manifest.referenceMaterials) {
      const ids = { newId: ctx.newId, now, ...(input.stableObjectIdentifier ? { stableObjectIdentifier: input.stableObjectIdentifier } : {}) };
      stores.referenceMaterials.add(playbook.objectIdentifier, newReferenceMaterial(input, ids));
    }
    const used = new Set<string>();
    for (const entry of manifest.assemblies) {
      // The archive was checked: every file an assembly names is there.
      const file = entry.file === undefined ? undefined : { fileName: basename(entry.file), ...(files.get(entry.file) as ArchiveFile) };
      const assembly: AssemblyRecord = {
        objectIdentifier: ctx.newId(),
        playbookIdentifier: playbook.objectIdentifier,
        name: entry.name,
        description: entry.description,
        assemblyType: entry.assemblyType,
        playbookGroupIdentifier: entry.playbookGroupObjectIdentifier ?? null,
        dateAdded: now,
        dateModified: now,
        owner: task.owner,
        file: file ? { blobKey: file.blobKey, fileName: file.fileName, size: file.size } : null,
        richText: entry.richText ?? null,
      };
      stores.assemblies.add(assembly);
      if (file) used.add(file.blobKey);
      for (const [reference, columns] of Object.entries(entry.templateColumns)) {
        for (const column of columns) stores.templateColumns.add(assembly.objectIdentifier, reference, templateColumn(ctx.newId(), column));
      }
      for (const [condition, conditions] of Object.entries(entry.categoryConditions)) {
        for (const item of conditions) stores.categoryConditions.add(assembly.objectIdentifier, condition, categoryCondition(ctx.newId(), item));
      }
    }
    stores.imports.succeeded(task.taskIdentifier, playbook.objectIdentifier);
    ctx.notify(task.tenant, {
      type: 'playbookImportSucceeded',
      title: 'Playbook import succeeded',
      message: `Playbook "${playbook.name}" was imported with ${manifest.assemblies.length} assembly(ies) and ${manifest.referenceMaterials.length} reference material(s).`,
      resourceIdentifiers: { taskObjectIdentifier: task.taskIdentifier, playbookObjectIdentifier: playbook.objectIdentifier },
    });
    return used;
  }
}

/**
 * The archive names definitions and options by id or by name (case-insensitive); the importing
 * tenant's ids replace them. An id this tenant does not have falls back to the name beside it
 * (version 2 archives carry both), so an archive from another tenant imports by name.
 */
function resolveMetadata(value: ArchiveMetadataValue, definitions: MetadataDefinition[], where: string): MetadataValueInput {
  const { organizationMetadataName: name, organizationMetadataIdentifier: id } = value;
  const definition =
    (id ? definitions.find((candidate) => candidate.objectIdentifier === id) : undefined) ?? definitions.find((candidate) => sameName(candidate.name, name ?? undefined));
  if (!definition) throw new ImportError(`${where} names organization metadata ${id ?? JSON.stringify(name)}, which this organization does not have.`);
  const option = (given: string, givenName?: string | null) => {
    const found =
      definition.options.find((candidate) => candidate.objectIdentifier === given || sameName(candidate.name, given)) ??
      definition.options.find((candidate) => sameName(candidate.name, givenName ?? undefined));
    if (!found) throw new ImportError(`${where}: ${JSON.stringify(givenName ?? given)} is not an option of organization metadata ${definition.name}.`);
    return found.objectIdentifier;
  };
  return {
    isYes: value.isYes ?? null,
    decimalValue: value.decimalValue ?? null,
    text: value.text ?? null,
    date: value.date ?? null,
    organizationMetadataIdentifier: definition.objectIdentifier,
    singleCategoryIdentifier: value.singleCategoryIdentifier ? option(value.singleCategoryIdentifier, value.singleCategoryName) : null,
    categories: value.categories ? value.categories.map((c, i) => option(c, value.categoryNames?.[i])) : null,
  };
}

function sameName(a: string, b: string | undefined): boolean {
  return b !== undefined && a.toLocaleLowerCase('en-US') === b.toLocaleLowerCase('en-US');
}
