// `npm run docs:options`: writes the option tables of docs/cli.md from the built program (dist).
import { readFileSync, writeFileSync } from 'node:fs';
import { buildProgram } from '../dist/src/cli/main.js';
import { optionTables, withTables } from '../dist/src/cli/option-tables.js';

const file = new URL('./cli.md', import.meta.url);
const program = await buildProgram();
writeFileSync(file, withTables(readFileSync(file, 'utf8'), optionTables(program)));
console.log('docs/cli.md: option tables written');
