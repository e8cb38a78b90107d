import type { Db } from './db.js';

/** The client handed to `db.$transaction(async (tx) => …)`: the models without connection control. */
export type DbTx = Omit<Db, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;
