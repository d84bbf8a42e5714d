// `contextfold migrate <url>`: creates the PostgreSQL table or checks the Redis key layout that
// the database stores need (idempotent), as `PostgresSession.setup` / `RedisSession.setup` do.
import type { Command } from 'commander'

import type { CommonFlags, RunContext } from './common.js'
import { migrate, type DatabaseFlags } from './database.js'
import { print, printJson } from './output.js'

export function registerMigrate(program: Command, run: (action: (ctx: RunContext) => Promise<void>, flags: CommonFlags) => Promise<void>): void {
  program
    .command('migrate')
    .description('create the table (PostgreSQL) or write the key layout (Redis) that sessions in the database need; safe to run again')
    .argument('<url>', 'a postgres:// or redis:// URL')
    .option('--schema <name>', 'PostgreSQL: the schema (default: public; created when missing)')
    .option('--table <name>', 'PostgreSQL: the table (default: contextfold_entries)')
    .option('--prefix <prefix>', 'Redis: the key prefix (default: contextfold:)')
    .option('--json', 'machine-readable output on stdout')
    .action(async (url: string, flags: DatabaseFlags & { json?: boolean }) => {
      await run(async (ctx) => {
        const done = await migrate(url, flags)
        if (ctx.json) printJson({ ok: true, message: done })
        else print(done)
      }, { ...flags, progress: false })
    })
}
