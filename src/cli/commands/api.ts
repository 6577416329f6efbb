// `ferry api METHOD PATH`: any call of the interface with auth handled, the way `gh api` serves GitHub.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { collect } from '../options.js';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function registerApi(program: Command): void {
  program
    .command('api')
    .description('call any endpoint of the service with auth handled, and print the JSON answer')
    .argument('<method>', `HTTP method (${METHODS.join(', ')})`)
    .argument('<path>', 'path, e.g. /projects or /projects/ID/documents?pageSize=5')
    .option('-f, --raw-field <key=value>', 'add a string parameter (query for GET/DELETE, JSON body field otherwise)', collect, [])
    .option('-F, --field <key=value>', 'add a typed parameter: true, false, null and numbers are converted; key=@FILE sends the file in a multipart/form-data body (POST, PUT), the other fields as its text parts', collect, [])
    .option('--input <file>', 'JSON request body from a file ("-" for stdin); -f/-F then go to the query')
    .option('--paginate', 'follow pages and print every item as one JSON array')
    .option('--page-size <n>', 'page size used with --paginate', '100')
    .option('--host <host>', 'base or settings (default: settings for /models paths, else base)')
    .addHelpText(
      'after',
      '\nExamples:\n  ferry api GET /projects --paginate\n  ferry api POST /projects -f name=Archive -f description="Moved from EU"\n  ferry api GET /models -F includeDisabled=true\n  ferry api POST "/projects/P/documents?documentUploadIdentifier=$(uuidgen)" -F file=@report.pdf\n  ferry api GET /playbooks/PB/assemblies/AS/content > template.docx',
    )
    .action(later(() => import('../actions/api.js'), 'apiAction'));
}
