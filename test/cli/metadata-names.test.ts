// Metadata mapped by name between tenants (issue 77): a migration and a replay import match the
// target's definitions and options by name wherever the target shows them, name every one they
// cannot match at once, with the command that lists the ids, and need --map for those alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { FerryClient } from '../../src/api/index.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { startRegion, writeProfiles, type Region } from '../helpers/regions.js';
import { shellWords } from '../helpers/shell-words.js';

let region: Region;
let env: Record<string, string>;
let dir: string;
let contoso: FerryClient;
let fabrikam: FerryClient;

beforeAll(async () => {
  region = await startRegion();
  dir = await mkdtemp(join(tmpdir(), 'ferry-metadata-names-'));
  env = { ...(await writeProfiles(join(dir, 'config.yaml'), { contoso: { region, tenant: 0 }, fabrikam: { region, tenant: 1 } })), FERRY_STATE_DIR: join(dir, 'state') };
  contoso = region.client(0);
  fabrikam = region.client(1);
});
afterAll(async () => {
  await region?.stop();
});

function definition(tenant: number, name: string): string {
  return region.tenants[tenant]!.organizationMetadata.find((d) => d.name === name)!.objectIdentifier;
}

async function option(client: FerryClient, tenant: number, definitionName: string, name: string): Promise<string> {
  return (await client.organizationMetadataOptions.list(definition(tenant, definitionName)).all()).find((o) => o.name === name)!.objectIdentifier;
}

describe('metadata by name across tenants', () => {
  let source: string;

  it('a target that carries none of the definitions: the dry run names every one, and the printed command lists what the target shows', async () => {
    const project = await contoso.projects.create({
      name: 'Contracts with metadata',
      description: '',
      metadata: [
        { organizationMetadataIdentifier: definition(0, 'Department'), text: 'Legal' },
        { organizationMetadataIdentifier: definition(0, 'Region'), singleCategoryIdentifier: await option(contoso, 0, 'Region', 'Europe') },
      ],
    });
    source = project.objectIdentifier;
    const dry = await runFerry(['migrate', '--from', 'contoso', '--to', 'fabrikam', '--projects', source, '--dry-run'], env);
    expect(dry.code, dry.stderr).not.toBe(0);
    const said = dry.stdout + dry.stderr;
    // Both at once, each by name, and the way to their ids.
    expect(said).toMatch(/BLOCKED: the target shows no organization metadata named as "Department" \([0-9a-f-]+\), "Region" \([0-9a-f-]+\)/);
    const printed = /`(ferry -p fabrikam metadata ls)`/.exec(said)?.[1];
    expect(printed, said).toBeDefined();
    const ls = await runFerry(shellWords(printed!).slice(1), env);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/^0 definitions seen at .*profile fabrikam; a definition that no project or playbook carries a value of is not shown/m);
  });

  it('lists what a tenant shows, with ids and options, in text and JSON', async () => {
    await fabrikam.projects.create({ name: 'Fabrikam ops', description: '', metadata: [{ organizationMetadataIdentifier: definition(1, 'Department'), text: 'Ops' }] });
    const text = await runFerry(['-p', 'fabrikam', 'metadata', 'ls'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${definition(1, 'Department')}  text`);
    expect(text.stdout).toContain('Department  (on 1 project, 0 playbooks)');
    const json = onlyJson(await runFerry(['-p', 'fabrikam', 'metadata', 'ls', '--json'], env));
    expect(json).toMatchObject({ command: 'metadata ls', status: 'succeeded', count: 1 });
    expect(json.items).toEqual([{ id: definition(1, 'Department'), name: 'Department', dataType: 'text', projects: 1, playbooks: 0, options: [] }]);
  });

  it('matches what the target shows by name, and needs --map for the rest alone', async () => {
    // Department is now seen at the target (the project above); Region is not: it alone is named.
    const dry = await runFerry(['migrate', '--from', 'contoso', '--to', 'fabrikam', '--projects', source, '--dry-run'], env);
    expect(dry.code).not.toBe(0);
    expect(dry.stdout + dry.stderr).toMatch(/no organization metadata named as "Region" \([0-9a-f-]+\):/);
    expect(dry.stdout + dry.stderr).not.toMatch(/named as [^:]*"Department"/);
    const map = join(dir, 'map.yaml');
    await writeFile(map, `organizationMetadata:\n  Region: ${definition(1, 'Region')}\n`);
    const ran = await runFerry(['migrate', '--from', 'contoso', '--to', 'fabrikam', '--projects', source, '--map', map, '--json'], env);
    const summary = onlyJson(ran);
    expect(summary.status, ran.stderr).toBe('succeeded');
    const copied = (summary.projects as { target: string }[])[0]!.target;
    const values = (await fabrikam.projects.get(copied)).metadataValues ?? [];
    // Department by name, Region by the map, its option Europe by name: fabrikam's own ids.
    expect(values.map((v) => v.metadata?.objectIdentifier).sort()).toEqual([definition(1, 'Department'), definition(1, 'Region')].sort());
    expect(values.find((v) => v.metadata?.objectIdentifier === definition(1, 'Region'))?.singleCategoryIdentifier).toBe(await option(fabrikam, 1, 'Region', 'Europe'));
    expect(values.find((v) => v.metadata?.objectIdentifier === definition(1, 'Department'))?.text).toBe('Legal');
  });
});
