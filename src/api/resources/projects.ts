import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { Project, ProjectAnalytics, ProjectInput, Query } from '../types.js';

type ListQuery = Omit<Query<'listProjects'>, 'pageNumber' | 'pageSize'>;

import { LEASE_RECORD_PREFIX } from '../../contract/conventions.js';

export { LEASE_RECORD_PREFIX };

export function isLeaseRecord(project: Pick<Project, 'name'>): boolean {
  return typeof project.name === 'string' && project.name.startsWith(LEASE_RECORD_PREFIX);
}

export class Projects extends Resource {
  /** The tenant's projects, ferry's lease records left out (`leaseRecords: true` lists only them). */
  list(query: ListQuery = {}, opts: ListOptions & { leaseRecords?: boolean } = {}): PagedList<Project> {
    const { leaseRecords, ...rest } = opts;
    const keep = leaseRecords ? isLeaseRecord : (p: Project) => !isLeaseRecord(p);
    return pagedGet(this.t, '/projects', query, { ...rest, keep: keep as (item: never) => boolean });
  }
  create(input: ProjectInput, opts: CallOptions<Project> = {}): Promise<Project> {
    return this.t.json({ method: 'POST', path: '/projects', json: input }, opts);
  }
  get(projectIdentifier: string, opts: CallOptions = {}): Promise<Project> {
    return this.t.json({ method: 'GET', path: `/projects/${seg(projectIdentifier)}` }, opts);
  }
  update(projectIdentifier: string, input: ProjectInput, opts: CallOptions = {}): Promise<Project> {
    return this.t.json({ method: 'PUT', path: `/projects/${seg(projectIdentifier)}`, json: input }, opts);
  }
  delete(projectIdentifier: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `/projects/${seg(projectIdentifier)}` }, opts);
  }
  /** The caller's personal project. */
  myPersonal(opts: CallOptions = {}): Promise<Project> {
    return this.t.json({ method: 'GET', path: '/projects/my-personal-project' }, opts);
  }
  analytics(projectIdentifier: string, opts: CallOptions = {}): Promise<ProjectAnalytics> {
    return this.t.json({ method: 'GET', path: `/projects/${seg(projectIdentifier)}/analytics` }, opts);
  }
}
