/** tslot (docs/protocol-notes.md §2): counts of a band's tempo unit since the Unix epoch. */
import { SvcError } from './errors.js';

export type Tempo = 'fast' | 'medium' | 'slow' | 'static';
export const TEMPOS: readonly Tempo[] = ['fast', 'medium', 'slow', 'static'];

/** Unit length in seconds of each tempo; `static` has the single tslot 0. */
export const TEMPO_UNIT_S: Readonly<Record<Tempo, number>> = {
  fast: 86_400,
  medium: 2_592_000,
  slow: 31_536_000,
  static: 0,
};

export function isTempo(x: unknown): x is Tempo {
  return typeof x === 'string' && (TEMPOS as readonly string[]).includes(x);
}

/** tslot containing `unixSeconds` for a band of `tempo`. */
export function tslotOf(unixSeconds: number, tempo: Tempo): number {
  if (!Number.isFinite(unixSeconds) || unixSeconds < 0) {
    throw new SvcError('invalid_argument', `unix_seconds: ${unixSeconds} must be a non-negative finite number`, { field: 'unix_seconds' });
  }
  if (tempo === 'static') return 0;
  return Math.floor(unixSeconds / TEMPO_UNIT_S[tempo]);
}

/** The half-open interval [start, end) in Unix seconds that `tslot` covers; static spans all time. */
export function tslotRange(tslot: number, tempo: Tempo): { start_unix: number; end_unix: number | null } {
  if (tempo === 'static') return { start_unix: 0, end_unix: null };
  const u = TEMPO_UNIT_S[tempo];
  return { start_unix: tslot * u, end_unix: (tslot + 1) * u };
}

/** tslot of `date` (Date or ISO 8601 text) for `tempo`. */
export function tslotOfDate(date: Date | string, tempo: Tempo): number {
  const d = typeof date === 'string' ? new Date(date) : date;
  const t = d.getTime();
  if (!Number.isFinite(t)) throw new SvcError('invalid_argument', `date: ${String(date)} is not a valid timestamp`, { field: 'date' });
  return tslotOf(Math.floor(t / 1000), tempo);
}

/** The current tslot of a tempo (for defaults). */
export function currentTslot(tempo: Tempo, nowMs: number = Date.now()): number {
  return tslotOf(Math.floor(nowMs / 1000), tempo);
}

/**
 * Checks a caller's tslot against a band's tempo grid. Not an integer ≥ 0 → invalid_argument;
 * a non-zero tslot for a static band, or one past the band's current slot (+1 for clock skew)
 * → tslot_mismatch.
 */
export function checkTslot(tslot: unknown, tempo: Tempo, band: string, nowMs: number = Date.now()): number {
  if (typeof tslot !== 'number' || !Number.isSafeInteger(tslot) || tslot < 0) {
    throw new SvcError('invalid_argument', `tslot: expected a non-negative integer, got ${JSON.stringify(tslot)}`, { field: 'tslot' });
  }
  if (tempo === 'static' && tslot !== 0) {
    throw new SvcError('tslot_mismatch', `tslot: band ${band} is static and has the single tslot 0 (got ${tslot})`, { field: 'tslot', band, tempo, valid: [0] });
  }
  if (tempo !== 'static') {
    const now = currentTslot(tempo, nowMs);
    if (tslot > now + 1) {
      throw new SvcError('tslot_mismatch', `tslot: ${tslot} is in the future for ${tempo} band ${band} (current tslot ${now})`, {
        field: 'tslot',
        band,
        tempo,
        current_tslot: now,
        unit_seconds: TEMPO_UNIT_S[tempo],
      });
    }
  }
  return tslot;
}
