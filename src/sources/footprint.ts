/**
 * Ground footprints of the neighbourhood bands (a 1 km window, a square around the cell centre):
 * metres per degree on the WGS 84 ellipsoid, so a footprint stated in metres is the same size on
 * the ground at every latitude.
 */

/** Metres per degree of latitude and of longitude at `lat` (the usual WGS 84 series). */
export function metresPerDegree(lat: number): { lat: number; lng: number } {
  const p = (lat * Math.PI) / 180;
  return {
    lat: 111_132.92 - 559.82 * Math.cos(2 * p) + 1.175 * Math.cos(4 * p),
    lng: 111_412.84 * Math.cos(p) - 93.5 * Math.cos(3 * p),
  };
}
