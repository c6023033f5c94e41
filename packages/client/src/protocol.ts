/**
 * The protocol module of the repository (src/protocol/: CBOR, BLAKE3, cell64, receipts,
 * verifyResponse, batch roots, scope bearer statements), pure and browser-safe. The package is
 * built with these sources compiled in (packages/client/README.md, "Build").
 */
export * from '../../../src/protocol/index.js';
