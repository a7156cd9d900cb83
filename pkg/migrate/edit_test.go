package migrate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
)

const (
	dA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	dB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	dC = "fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13"
)

func replacer() *migrate.Replacer {
	migrated := map[string]bool{dA + ".png": true, dB + ".pdf": true}
	return &migrate.Replacer{
		Resolver: ref.NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"}),
		Target: func(key string) (string, bool) {
			return "s3://media/inbound/" + key, migrated[key]
		},
	}
}

// rewriteAndBack rewrites unit, checks the result with check, and proves that
// Revert restores the original bytes exactly.
func rewriteAndBack(t *testing.T, place ref.Place, unit string) (string, migrate.UnitEdits) {
	t.Helper()
	ue, err := replacer().Find(place, []byte(unit))
	if err != nil {
		t.Fatal(err)
	}
	out, err := migrate.Apply([]byte(unit), ue.Edits)
	if err != nil {
		t.Fatal(err)
	}
	rec := migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(unit)), NewSHA256: digest(out), Edits: ue.Edits}
	back, err := migrate.Revert(out, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(ue.Edits) > 0 && string(back) != unit {
		t.Fatalf("revert gave\n%s\nwant\n%s", back, unit)
	}
	return string(out), ue
}

func TestFindDocument(t *testing.T) {
	doc := `{
  "task_id": "t-1",
  "messages": [
    {"role": "user", "parts": [
      {"type": "image", "media": {"mimeType": "image/png", "uri": "/srv/agent/.forge/files/inbound/` + dA + `.png"}},
      {"type": "document", "media": {"uri": "file:///srv/agent/.forge/files/inbound/` + dB + `.pdf"}},
      {"type": "image", "media": {"uri": ".forge/files/inbound/` + dA + `.png"}},
      {"type": "image", "media": {"uri": "/srv/agent/.forge/files/inbound/` + dC + `.png"}},
      {"type": "text", "text": "saved to /srv/agent/.forge/files/inbound/` + dA + `.png.\nand /backup/srv/agent/.forge/files/inbound/` + dA + `.png stays"}
    ]},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look",
      "arguments": "{\"path\": \"/srv/agent/.forge/files/inbound/` + dA + `.png\", \"note\": \"caf\u00e9\"}"}}]}
  ]
}`
	out, ue := rewriteAndBack(t, ref.Place{Source: "s", Document: "sessions/t-1.json"}, doc)
	if len(ue.Edits) != 5 || len(ue.Kept) != 0 {
		t.Fatalf("edits %+v kept %v", ue.Edits, ue.Kept)
	}
	for _, want := range []string{
		`"uri": "s3://media/inbound/` + dA + `.png"`,
		`"uri": "s3://media/inbound/` + dB + `.pdf"`,
		`saved to s3://media/inbound/` + dA + `.png.\nand /backup/srv/agent/.forge/files/inbound/` + dA + `.png stays`,
		`\"path\": \"s3://media/inbound/` + dA + `.png\", \"note\": \"caf\u00e9\"`,
		`"uri": "/srv/agent/.forge/files/inbound/` + dC + `.png"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten document lacks %s:\n%s", want, out)
		}
	}
	if strings.Count(out, "s3://") != 5 {
		t.Errorf("rewritten document:\n%s", out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("rewritten document is not JSON: %v", err)
	}
}

func TestFindValues(t *testing.T) {
	// coffer: a JSON array of blocks in a TEXT column.
	blocks := `[{"type":"text","text":"look"},{"type":"attachment","path":"/srv/agent/.forge/files/inbound/` + dA + `.png","mime":"image/png"}]`
	out, ue := rewriteAndBack(t, ref.Place{Table: "chat_messages", Key: "id=m1", Column: "content"}, blocks)
	if len(ue.Edits) != 1 || !strings.Contains(out, `"path":"s3://media/inbound/`+dA+`.png"`) {
		t.Fatalf("blocks: %s %+v", out, ue)
	}
	// Plain text in a column.
	out, _ = rewriteAndBack(t, ref.Place{Table: "notes", Key: "id=1", Column: "body"}, "see /srv/agent/.forge/files/inbound/"+dB+".pdf, please")
	if out != "see s3://media/inbound/"+dB+".pdf, please" {
		t.Fatalf("plain: %q", out)
	}
	// A {bucket, path} pair cannot become a URL: it is kept and said so.
	pair := `{"attachments":[{"bucket":"b","path":"x/` + dA + `.png"}]}`
	r := &migrate.Replacer{Resolver: ref.NewBucketResolver("s3", "b", "x/"), Target: func(k string) (string, bool) { return "gs://other/" + k, true }}
	ue, err := r.Find(ref.Place{Table: "messages", Key: "id=1", Column: "metadata"}, []byte(pair))
	if err != nil || len(ue.Edits) != 0 || len(ue.Kept) != 1 {
		t.Fatalf("pair: %+v %v", ue, err)
	}
}

func TestFindMalformedDocumentLeftAlone(t *testing.T) {
	_, err := replacer().Find(ref.Place{Document: "t.json"}, []byte(`{"uri": "/srv/agent/.forge/files/inbound/`+dA+`.png"`))
	if err == nil || !strings.Contains(err.Error(), "t.json") {
		t.Fatalf("err = %v", err)
	}
}

// TestRevertAfterAppend: the agent appended a message after the rewrite; the
// rewritten reference is still put back.
func TestRevertAfterAppend(t *testing.T) {
	doc := `{"messages":[{"uri":"/srv/agent/.forge/files/inbound/` + dA + `.png"}]}`
	place := ref.Place{Document: "t.json"}
	ue, err := replacer().Find(place, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := migrate.Apply([]byte(doc), ue.Edits)
	rec := migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(doc)), NewSHA256: digest(out), Edits: ue.Edits}
	later := bytes.Replace(out, []byte(`]}`), []byte(`,{"role":"assistant","content":"a cat"}]}`), 1)
	back, err := migrate.Revert(later, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"uri":"/srv/agent/.forge/files/inbound/` + dA + `.png"},{"role":"assistant","content":"a cat"}]}`
	if string(back) != want {
		t.Fatalf("got %s", back)
	}
	// Already restored: nothing to do.
	if b, err := migrate.Revert([]byte(doc), rec); b != nil || err != nil {
		t.Fatalf("revert of the original: %q %v", b, err)
	}
	// Two different references rewritten to the same URL, and a third copy
	// appeared: ambiguous, left alone.
	doc2 := `{"a":"/srv/agent/.forge/files/inbound/` + dA + `.png","b":".forge/files/inbound/` + dA + `.png"}`
	ue, _ = replacer().Find(place, []byte(doc2))
	out, _ = migrate.Apply([]byte(doc2), ue.Edits)
	rec = migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(doc2)), NewSHA256: digest(out), Edits: ue.Edits}
	later = bytes.Replace(out, []byte(`}`), []byte(`,"c":"s3://media/inbound/`+dA+`.png"}`), 1)
	if _, err := migrate.Revert(later, rec); !errors.Is(err, migrate.ErrRevertConflict) {
		t.Fatalf("ambiguous revert: %v", err)
	}
}

// FuzzRewrite: whatever a session holds, a rewrite never breaks JSON that was
// valid, only touches references, and reverting restores the bytes exactly.
func FuzzRewrite(f *testing.F) {
	f.Add(`{"uri":"/srv/agent/.forge/files/inbound/`+dA+`.png"}`, true)
	f.Add(`["saved to /srv/agent/.forge/files/inbound/`+dB+`.pdf.", {"arguments":"{\"path\":\"./`+dA+`.png\"}"}]`, false)
	f.Add(`look at .forge/files/inbound/`+dA+`.png\n`, false)
	f.Fuzz(func(t *testing.T, unit string, document bool) {
		place := ref.Place{Document: "d.json"}
		if !document {
			place = ref.Place{Table: "t", Key: "id=1", Column: "c"}
		}
		ue, err := replacer().Find(place, []byte(unit))
		if err != nil {
			return
		}
		out, err := migrate.Apply([]byte(unit), ue.Edits)
		if err != nil {
			t.Fatalf("Find's edits do not apply: %v", err)
		}
		if json.Valid([]byte(unit)) && !json.Valid(out) {
			t.Fatalf("rewrite broke JSON:\n%s\n%s", unit, out)
		}
		for _, e := range ue.Edits {
			if !strings.HasPrefix(e.New, "s3://media/inbound/") {
				t.Fatalf("edit %+v", e)
			}
		}
		rec := migrate.Record{Place: &place, OldSHA256: digest([]byte(unit)), NewSHA256: digest(out), Edits: ue.Edits}
		back, err := migrate.Revert(out, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(ue.Edits) > 0 && string(back) != unit {
			t.Fatalf("revert gave %q, want %q", back, unit)
		}
	})
}
