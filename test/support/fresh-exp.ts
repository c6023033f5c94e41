/**
 * Signed statements are single-use, and two equal requests made in one second would be one
 * statement. Tests that sign many statements of the same kind take their expiry from here: the
 * latest free second at or before `nowS + ttlS` for that statement's identity, never reused in
 * this process, as a client making several requests per second would do.
 */
const used = new Set<string>();

export function freshExp(identity: string, nowS: number, ttlS: number): number {
  let exp = nowS + ttlS;
  while (used.has(`${identity}|${exp}`)) exp--;
  used.add(`${identity}|${exp}`);
  return exp;
}
