// `node --import ./register.mjs`: installs hooks.mjs beside it.
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url));
