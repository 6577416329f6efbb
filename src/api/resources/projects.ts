import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { Project, ProjectAnalytics, ProjectInput, Query } from '../types.js';

type ListQuery = Omit<Query<'listProjects'>, 'pageNumber' | 'pageSize'>;

export class Projects extends Resource {
  list(query: ListQuery = {}, opts: ListOptions = {}): PagedList<Project> {
    return pagedGet(this.t, '/projects', query, opts);
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
