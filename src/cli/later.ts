// A command's action, loaded when the command runs: `ferry mirror --help` reads the definition
// only, and pays for neither the client, nor SQLite, nor the job.
type Actions<K extends string> = Record<K, (...args: never[]) => Promise<void>>;

export function later<K extends string>(load: () => Promise<Actions<K>>, name: K): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const actions = await load();
    await (actions[name] as (...a: unknown[]) => Promise<void>)(...args);
  };
}
