package owner

import (
	"context"
	"fmt"
	"testing"

	"github.com/mediactl/mediactl/pkg/sessions"
)

// BenchmarkAttributeRows is the attribution's cost per row of coffer's
// chat_messages (ten columns, one attachment), as a scan's read hands the
// rows over: what report and forget add to the read of a session database.
func BenchmarkAttributeRows(b *testing.B) {
	const n = 100_000
	items := make([]sessions.Item, n)
	for i := range items {
		items[i] = sqlRows("chat_messages", fmt.Sprintf("id=m%07d", i),
			"id", fmt.Sprintf("m%07d", i), "conversation_id", fmt.Sprintf("c%05d", i/40), "seq", "3", "role", "user",
			"content", `[{"type": "attachment", "path": "/h/.coffer/channel-media/`+fmt.Sprintf("%064x", i)+`.png", "mime": "image/png"}]`,
			"status", "done", "model_id", "claude", "prompt_tokens", "120", "completion_tokens", "80",
			"created_at", "2026-11-30 03:10:19.151316")
	}
	src := &source{items}
	b.ReportAllocs()
	for b.Loop() {
		a := NewAttributor(Rule{Layout: "coffer"})
		if _, err := a.Wrap(src).Walk(context.Background(), func(sessions.Item) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
