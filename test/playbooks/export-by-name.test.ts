// A playbook is named by its name as well as its id (issue 77, docs/cli.md *Names and ids*):
// `playbooks export "Contracts"` exports that one; a name two playbooks share is exit 2 listing
// both ids; a name none has is exit 2 pointing to `ferry playbooks list`.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService } from '../helpers/service.js';
import { buildRichPlaybook } from '../helpers/playbook.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { openArchive } from '../../src/playbooks/read.js';

const tempDir = useTempDirs();
const service = useService();

describe('playbooks export by name', () => {
  it('exports the one of that name; two of one name, or none, is exit 2 saying which', async () => {
    const client = service().client();
    const tenant = service().emulator.tenants[0]!;
    const built = await buildRichPlaybook(client, tenant, { name: 'Contracts by name', assemblies: 1 });
    const dir = await tempDir('ferry-pb-name-');
    const zip = join(dir, 'out.zip');
    const exported = onlyJson(await runFerry(['playbooks', 'export', 'Contracts by name', '--out', zip, '--state', join(dir, 's.sqlite'), '--json'], service().env()));
    expect(exported).toMatchObject({ exitCode: 0, counts: { written: 1 } });
    expect((await openArchive(zip)).manifest.playbook.objectIdentifier).toBe(built.id);

    const twin = await buildRichPlaybook(client, tenant, { name: 'Contracts by name', assemblies: 1 });
    const twice = await runFerry(['playbooks', 'export', 'Contracts by name', '--out', join(dir, 'twice.zip'), '--state', join(dir, 's.sqlite')], service().env());
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(built.id);
    expect(twice.stderr).toContain(twin.id);

    const none = await runFerry(['playbooks', 'export', 'No such playbook', '--out', join(dir, 'none.zip'), '--state', join(dir, 's.sqlite')], service().env());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('`ferry playbooks list` lists them');
  });
});
