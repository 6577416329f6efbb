// `ferry doctor --probe` against the emulator in each of its modes: the probe reports the mode the
// emulator was started in, and `matches` gives back its flags; the scratch project is gone after.
import { describe, expect, it } from 'vitest';
import type { EmulatorOptions } from '../../src/emulator/index.js';
import { probe, probeEmulators, scratchLeft, type ProbeAnswer } from '../helpers/probe.js';

const emulator = probeEmulators();

/** Each mode: the emulator's options, the flags `ferry emulator` takes for it, and what the probe must say. */
const MODES: { name: string; opts: EmulatorOptions; flags: string; check?: (p: ProbeAnswer['probe']) => void }[] = [
  { name: 'default', opts: {}, flags: '', check: (p) => expect(p).toMatchObject({ folderRoute: { offered: true }, contentRoute: { route: true }, contentRange: { honoured: true, validator: 'etag' }, formOrder: { order: 'any' }, pageCap: { cap: null }, search: { match: 'substring', caseSensitive: false }, folderCase: { caseSensitive: false }, metadataRoundTrip: { kept: 'kept' }, dateAddedResolutionMs: { ms: 1 } }) },
  { name: '--strict', opts: { strict: true }, flags: '--strict', check: (p) => expect(p).toMatchObject({ folderRoute: { offered: false, status: 404 }, contentRoute: { route: false, linkNeedsToken: false, linkWorksAfterMs: null }, contentRange: { honoured: true } }) },
  { name: '--max-page-size 7', opts: { maxPageSize: 7 }, flags: '--max-page-size 7', check: (p) => expect(p.pageCap).toMatchObject({ cap: 7 }) },
  { name: '--folders none', opts: { folders: 'none' }, flags: '--folders none' },
  { name: '--search prefix', opts: { search: 'prefix' }, flags: '--search prefix' },
  { name: '--search word --search-case sensitive', opts: { search: 'word', searchCase: 'sensitive' }, flags: '--search word --search-case sensitive' },
  { name: '--search-case sensitive', opts: { searchCase: 'sensitive' }, flags: '--search-case sensitive' },
  { name: '--folder-case sensitive', opts: { folderCase: 'sensitive' }, flags: '--folder-case sensitive', check: (p) => expect(p.folderCase).toEqual({ caseSensitive: true }) },
  { name: '--time-resolution 1000', opts: { timeResolutionMs: 1000 }, flags: '--time-resolution 1000' },
  { name: '--metadata dropped', opts: { metadata: 'dropped' }, flags: '--metadata dropped' },
  { name: '--form-order fields-first', opts: { formOrder: 'fields-first' }, flags: '--form-order fields-first', check: (p) => expect(p.formOrder).toEqual({ order: 'fields-first' }) },
  { name: '--range ignored', opts: { range: 'ignored' }, flags: '--range ignored', check: (p) => expect(p.contentRange).toEqual({ honoured: false, validator: 'etag' }) },
  { name: '--strict --link-auth token', opts: { strict: true, linkAuth: 'token' }, flags: '--strict --link-auth token' },
];

describe('ferry doctor --probe finds the mode', () => {
  for (const mode of MODES) {
    it(`finds the emulator's mode: ${mode.name}`, async () => {
      const { env, client } = await emulator(mode.opts);
      try {
        const report = await probe(env);
        mode.check?.(report.probe);
        expect(report.matches).toBe(mode.flags);
        expect(report.scratch.created).toBe(report.scratch.removed);
        expect(await scratchLeft(client)).toBe(0);
      } finally {
        await client.close();
      }
    });
  }

  for (const when of ['when-processed', 'at-patch'] as const) {
    it(`dateCompleted ${when}: found in the playbook it is given, its document upload removed`, async () => {
      const { env, client } = await emulator({ dateCompleted: when, processing: { minDelayMs: 400, maxDelayMs: 600, seed: 1 } });
      try {
        const playbook = (await client.playbooks.create({ name: 'probe playbook', isPrivate: false, organizationWide: true })).objectIdentifier;
        const report = await probe(env, ['--playbook', playbook]);
        expect(report.probe.dateCompleted).toEqual({ when });
        expect(report.matches).toBe(when === 'at-patch' ? '--date-completed at-patch' : '');
        expect((await client.documentUploads.list(playbook).all()).filter((u) => u.name?.startsWith('.ferry-probe'))).toEqual([]);
      } finally {
        await client.close();
      }
    });
  }

  for (const format of ['events', 'json', 'no-final'] as const) {
    it(`a streamed reply, --stream-format ${format}: found with the assistant and model it is given`, async () => {
      const { emu, env, client } = await emulator({ streamFormat: format });
      try {
        const chat = emu.tenants[0]!.assistants[0]!;
        const model = (await client.models.list().all())[0]!.objectIdentifier as string;
        const report = await probe(env, ['--assistant', `${chat.projectIdentifier}/${chat.assistantIdentifier}`, '--model', model]);
        expect(report.probe.streamFormat).toEqual({ format });
        expect(report.matches).toBe(format === 'events' ? '' : `--stream-format ${format}`);
      } finally {
        await client.close();
      }
    });
  }
});
