/**
 * How long the webhook receiver trusts what it read of a connection (status, owner) and of its owner's secret
 * versions. A change made through this instance (a rotation, a disconnection, a save) is seen at once: it forgets
 * everything. One made elsewhere (another instance, a worker marking a connection AUTH_FAILED) is seen within this
 * much after the read model shows it. The end of a previous secret's grace is exact: it is kept as a time, compared
 * at each delivery.
 */
export const WEBHOOK_LOOKUP_TTL_MS = 5_000;

/** Connections (by the provider's id, unknown ones too) the receiver keeps: least recently delivered to first out. */
export const WEBHOOK_LOOKUP_ENTRIES = 10_000;
