/**
 * Process entry of the command line (`npx svc …` through bin/svc.mjs, `npm start`): runs one
 * command (cli-commands.ts) and exits with its status; `serve` keeps the process running.
 */
import { runCli } from './cli-commands.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
