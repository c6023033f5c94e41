/** The pure, browser-safe protocol core: everything a third-party verifier needs. */
export * from './bytes.js';
export * from './base32.js';
export * from './hash.js';
export * from './ulid.js';
export * from './errors.js';
export * from './cell64.js';
export * from './tslot.js';
export * from './cbor.js';
export * from './cid.js';
export * from './preimage.js';
export * from './receipt.js';
export * from './ed25519.js';
export * from './merkle-batch.js';
export * from './log-tree.js';
export * from './tree-head.js';
export * from './receipt-template.js';
export * from './verify-response.js';
