// Minimal typed client; tabs and CRLF-free on purpose.
export interface RecallItem<T = unknown> {
	kind: "fact" | "episode" | "run";
	id: string;
	score?: number | null;
	payload: T;
}

export async function recall(query: string, opts: { limit?: number } = {}): Promise<RecallItem[]> {
	const res = await fetch(`http://127.0.0.1:8737/api/v1/recall`, {
		method: "POST",
		headers: { "content-type": "application/json" },
		body: JSON.stringify({ query, limit: opts.limit ?? 8 }),
	});
	if (!res.ok) throw new Error(`recall failed: ${res.status} ${await res.text()}`);
	return ((await res.json()) as { items: RecallItem[] }).items.filter((i) => i.score !== 0);
}
