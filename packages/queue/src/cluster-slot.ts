/** Redis Cluster's key space: every key maps to one of these slots. */
export const CLUSTER_SLOTS = 16_384;

/**
 * The Cluster slot of `key`, as Redis computes it: CRC16 (XMODEM) of the key's hash tag (the text
 * between the first '{' and the next '}', when not empty), else of the whole key, modulo 16384.
 */
export function clusterSlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}
