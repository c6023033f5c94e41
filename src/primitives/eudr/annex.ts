/**
 * Annex I of Regulation (EU) 2023/1115: the Combined Nomenclature headings that make a product a
 * "relevant commodity", the lookup from a caller's CN code to its commodity, and the checks of the
 * two codes every plot carries (CN code, ISO 3166-1 alpha-3 country of production).
 */
import { createRequire } from 'node:module';
import { invalidArgument } from '../../protocol/errors.js';
import type { Commodity } from './types.js';

const require = createRequire(import.meta.url);

/**
 * The Annex I headings as digit prefixes. The annex words some headings with exclusions (packing
 * material of 4415 used only to carry another product, bamboo-based and recovered paper of
 * chapters 47 and 48); a code alone cannot tell those apart, so the whole heading is listed.
 */
export const ANNEX_I_HEADINGS: ReadonlyArray<{ prefix: string; commodity: Commodity; description: string }> = [
  { prefix: '010221', commodity: 'cattle', description: 'live bovine animals, pure-bred breeding cattle' },
  { prefix: '010229', commodity: 'cattle', description: 'live bovine animals, cattle other than pure-bred breeding' },
  { prefix: '0201', commodity: 'cattle', description: 'meat of bovine animals, fresh or chilled' },
  { prefix: '0202', commodity: 'cattle', description: 'meat of bovine animals, frozen' },
  { prefix: '020610', commodity: 'cattle', description: 'edible offal of bovine animals, fresh or chilled' },
  { prefix: '020622', commodity: 'cattle', description: 'edible livers of bovine animals, frozen' },
  { prefix: '020629', commodity: 'cattle', description: 'other edible offal of bovine animals, frozen' },
  { prefix: '160250', commodity: 'cattle', description: 'prepared or preserved meat or offal of bovine animals' },
  { prefix: '4101', commodity: 'cattle', description: 'raw hides and skins of bovine animals' },
  { prefix: '4104', commodity: 'cattle', description: 'tanned or crust hides and skins of bovine animals' },
  { prefix: '4107', commodity: 'cattle', description: 'leather of bovine animals, further prepared after tanning or crusting' },
  { prefix: '1801', commodity: 'cocoa', description: 'cocoa beans, whole or broken, raw or roasted' },
  { prefix: '1802', commodity: 'cocoa', description: 'cocoa shells, husks, skins and other cocoa waste' },
  { prefix: '1803', commodity: 'cocoa', description: 'cocoa paste' },
  { prefix: '1804', commodity: 'cocoa', description: 'cocoa butter, fat and oil' },
  { prefix: '1805', commodity: 'cocoa', description: 'cocoa powder, not sweetened' },
  { prefix: '1806', commodity: 'cocoa', description: 'chocolate and other food preparations containing cocoa' },
  { prefix: '0901', commodity: 'coffee', description: 'coffee, roasted or not, decaffeinated or not; coffee husks and skins; coffee substitutes containing coffee' },
  { prefix: '120710', commodity: 'oil_palm', description: 'palm nuts and kernels' },
  { prefix: '1511', commodity: 'oil_palm', description: 'palm oil and its fractions' },
  { prefix: '151321', commodity: 'oil_palm', description: 'palm kernel and babassu oil, crude' },
  { prefix: '151329', commodity: 'oil_palm', description: 'palm kernel and babassu oil and their fractions, other than crude' },
  { prefix: '230660', commodity: 'oil_palm', description: 'oilcake and other solid residues of palm nuts or kernels' },
  { prefix: '290545', commodity: 'oil_palm', description: 'glycerol' },
  { prefix: '291570', commodity: 'oil_palm', description: 'palmitic acid, stearic acid, their salts and esters' },
  { prefix: '291590', commodity: 'oil_palm', description: 'other saturated acyclic monocarboxylic acids, their salts and esters' },
  { prefix: '291615', commodity: 'oil_palm', description: 'oleic, linoleic or linolenic acids, their salts and esters' },
  { prefix: '3401', commodity: 'oil_palm', description: 'soap and organic surface-active products for use as soap' },
  { prefix: '382311', commodity: 'oil_palm', description: 'stearic acid, industrial' },
  { prefix: '382312', commodity: 'oil_palm', description: 'oleic acid, industrial' },
  { prefix: '382319', commodity: 'oil_palm', description: 'other industrial monocarboxylic fatty acids; acid oils from refining' },
  { prefix: '382370', commodity: 'oil_palm', description: 'industrial fatty alcohols' },
  { prefix: '4001', commodity: 'rubber', description: 'natural rubber' },
  { prefix: '4005', commodity: 'rubber', description: 'compounded rubber, unvulcanised' },
  { prefix: '4006', commodity: 'rubber', description: 'unvulcanised rubber in other forms and articles of it' },
  { prefix: '4007', commodity: 'rubber', description: 'vulcanised rubber thread and cord' },
  { prefix: '4008', commodity: 'rubber', description: 'plates, sheets, strip, rods and profile shapes of vulcanised rubber' },
  { prefix: '4010', commodity: 'rubber', description: 'conveyor or transmission belts of vulcanised rubber' },
  { prefix: '4011', commodity: 'rubber', description: 'new pneumatic tyres of rubber' },
  { prefix: '4012', commodity: 'rubber', description: 'retreaded or used pneumatic tyres of rubber; solid or cushion tyres' },
  { prefix: '4013', commodity: 'rubber', description: 'inner tubes of rubber' },
  { prefix: '4015', commodity: 'rubber', description: 'articles of apparel and clothing accessories of vulcanised rubber' },
  { prefix: '4016', commodity: 'rubber', description: 'other articles of vulcanised rubber' },
  { prefix: '4017', commodity: 'rubber', description: 'hard rubber and articles of hard rubber' },
  { prefix: '1201', commodity: 'soya', description: 'soya beans' },
  { prefix: '120810', commodity: 'soya', description: 'flours and meals of soya beans' },
  { prefix: '1507', commodity: 'soya', description: 'soya-bean oil and its fractions' },
  { prefix: '2304', commodity: 'soya', description: 'oilcake and other solid residues of soya-bean oil' },
  { prefix: '4401', commodity: 'wood', description: 'fuel wood; wood in chips or particles; sawdust and wood waste' },
  { prefix: '4402', commodity: 'wood', description: 'wood charcoal' },
  { prefix: '4403', commodity: 'wood', description: 'wood in the rough' },
  { prefix: '4404', commodity: 'wood', description: 'hoopwood, split poles, piles, pickets and stakes of wood' },
  { prefix: '4405', commodity: 'wood', description: 'wood wool and wood flour' },
  { prefix: '4406', commodity: 'wood', description: 'railway or tramway sleepers of wood' },
  { prefix: '4407', commodity: 'wood', description: 'wood sawn or chipped lengthwise, sliced or peeled, thicker than 6 mm' },
  { prefix: '4408', commodity: 'wood', description: 'sheets for veneering and for plywood' },
  { prefix: '4409', commodity: 'wood', description: 'wood continuously shaped along any of its edges or faces' },
  { prefix: '4410', commodity: 'wood', description: 'particle board, oriented strand board and similar board of wood' },
  { prefix: '4411', commodity: 'wood', description: 'fibreboard of wood' },
  { prefix: '4412', commodity: 'wood', description: 'plywood, veneered panels and similar laminated wood' },
  { prefix: '4413', commodity: 'wood', description: 'densified wood' },
  { prefix: '4414', commodity: 'wood', description: 'wooden frames for paintings, photographs, mirrors or similar objects' },
  { prefix: '4415', commodity: 'wood', description: 'packing cases, boxes, crates, drums, pallets and similar packings of wood' },
  { prefix: '4416', commodity: 'wood', description: "casks, barrels, vats, tubs and other coopers' products of wood" },
  { prefix: '4417', commodity: 'wood', description: 'tools, tool bodies, tool handles, broom or brush bodies and handles of wood' },
  { prefix: '4418', commodity: 'wood', description: "builders' joinery and carpentry of wood" },
  { prefix: '4419', commodity: 'wood', description: 'tableware and kitchenware of wood' },
  { prefix: '4420', commodity: 'wood', description: 'wood marquetry, caskets, statuettes and other ornaments of wood' },
  { prefix: '4421', commodity: 'wood', description: 'other articles of wood' },
  { prefix: '47', commodity: 'wood', description: 'pulp of wood or of other fibrous cellulosic material' },
  { prefix: '48', commodity: 'wood', description: 'paper and paperboard; articles of paper pulp, paper or paperboard' },
  { prefix: '49', commodity: 'wood', description: 'printed books, newspapers, pictures and other products of the printing industry, of paper' },
  { prefix: '940330', commodity: 'wood', description: 'wooden furniture of a kind used in offices' },
  { prefix: '940340', commodity: 'wood', description: 'wooden furniture of a kind used in the kitchen' },
  { prefix: '940350', commodity: 'wood', description: 'wooden furniture of a kind used in the bedroom' },
  { prefix: '940360', commodity: 'wood', description: 'other wooden furniture' },
  { prefix: '940391', commodity: 'wood', description: 'parts of furniture, of wood' },
  { prefix: '940610', commodity: 'wood', description: 'prefabricated buildings of wood' },
  { prefix: '940161', commodity: 'wood', description: 'upholstered seats with wooden frames' },
  { prefix: '940169', commodity: 'wood', description: 'other seats with wooden frames' },
  { prefix: '940191', commodity: 'wood', description: 'parts of seats, of wood' },
];

/** Longest prefixes first, so the most specific heading wins the lookup. */
const BY_LENGTH = [...ANNEX_I_HEADINGS].sort((a, b) => b.prefix.length - a.prefix.length || a.prefix.localeCompare(b.prefix));

const CN_DIGITS = /^[0-9]{6,10}$/;

/** A CN code as callers write it ("0901 11", "1801.00") reduced to its digits. */
export function normalizeHs(code: string): string {
  return code.replace(/[\s.]/g, '');
}

/** The Annex I commodity of a CN code of 6 to 10 digits (longest matching heading), or null. */
export function commodityOfHs(code: string): { commodity: Commodity; heading: string; description: string } | null {
  const digits = normalizeHs(code);
  if (!CN_DIGITS.test(digits)) return null;
  const h = BY_LENGTH.find((x) => digits.startsWith(x.prefix));
  return h ? { commodity: h.commodity, heading: h.prefix, description: h.description } : null;
}

/** True for live cattle and bovine meat (0102, 0201, 0202): the plots where the animals were kept count. */
export function isCattleHs(code: string): boolean {
  const head = normalizeHs(code).slice(0, 4);
  return head === '0102' || head === '0201' || head === '0202';
}

let alpha3Codes: Record<string, string> | undefined;

/** True for an upper-case ISO 3166-1 alpha-3 code that i18n-iso-countries knows. */
export function isAlpha3(code: string): boolean {
  if (typeof code !== 'string' || !/^[A-Z]{3}$/.test(code)) return false;
  alpha3Codes ??= (require('i18n-iso-countries') as { getAlpha3Codes(): Record<string, string> }).getAlpha3Codes();
  return Object.prototype.hasOwnProperty.call(alpha3Codes, code);
}

/** Checks a plot's CN code and country of production; `at` is the plot's path (e.g. "plots[2]"). */
export function checkPlotCodes(plot: { commodity_hs: string; country_of_production: string }, at: string): { commodity: Commodity; is_cattle: boolean } {
  const hs: unknown = plot.commodity_hs;
  const hsField = `${at}.commodity_hs`;
  if (typeof hs !== 'string') throw invalidArgument(hsField, `expected a Combined Nomenclature code as a string, got ${typeof hs}; it is not a commodity of Annex I`);
  const shown = JSON.stringify(hs.slice(0, 40));
  if (!CN_DIGITS.test(normalizeHs(hs))) throw invalidArgument(hsField, `${shown} is not a Combined Nomenclature code of 6 to 10 digits, so it is not a commodity of Annex I`);
  const found = commodityOfHs(hs);
  if (!found) throw invalidArgument(hsField, `${shown} is not a commodity of Annex I of Regulation (EU) 2023/1115 (no listed heading starts its digits)`);
  const country: unknown = plot.country_of_production;
  if (typeof country !== 'string' || !isAlpha3(country)) {
    const shownCountry = typeof country === 'string' ? JSON.stringify(country.slice(0, 40)) : typeof country;
    throw invalidArgument(`${at}.country_of_production`, `${shownCountry} is not an ISO 3166-1 alpha-3 country code (three upper-case letters, e.g. "CIV")`);
  }
  return { commodity: found.commodity, is_cattle: isCattleHs(hs) };
}
