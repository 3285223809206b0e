export declare function serveStripped(sources: Record<string, string>): void;
export declare function strippedApart(entries: readonly string[]): Promise<Record<string, string>>;
