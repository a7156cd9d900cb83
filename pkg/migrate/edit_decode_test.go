package migrate_test

import (
	"encoding/json"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
)

// rewriteLikeExtractor rewrites unit with r and checks it against what the
// extractor reports before and after: every reference to a migrated blob it
// reported is rewritten or kept, once each, and nothing else is rewritten
// (the edits are the references that no longer point at the source); JSON
// stays JSON, rollback restores the bytes, and a second run changes nothing.
func rewriteLikeExtractor(t *testing.T, r *migrate.Replacer, place ref.Place, unit string) (string, migrate.UnitEdits) {
	t.Helper()
	ue, err := r.Find(place, []byte(unit))
	must(t, err)
	out, err := migrate.Apply([]byte(unit), ue.Edits)
	must(t, err)
	if json.Valid([]byte(unit)) && !json.Valid(out) {
		t.Fatalf("not JSON after the rewrite:\n%s", out)
	}
	before, left := stillPointing(t, r, place, []byte(unit)), stillPointing(t, r, place, out)
	if len(ue.Kept) != left {
		t.Errorf("kept %q, but %d references still point at migrated blobs in\n%q", ue.Kept, left, out)
	}
	if len(ue.Edits) != before-left {
		t.Errorf("%d edits %+v for %d references rewritten in\n%q", len(ue.Edits), ue.Edits, before-left, unit)
	}
	rec := migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(unit)), NewSHA256: digest(out), Edits: ue.Edits}
	back, err := migrate.Revert(out, rec)
	must(t, err)
	if len(ue.Edits) > 0 && string(back) != unit {
		t.Fatalf("revert gave\n%q\nwant\n%q", back, unit)
	}
	again, err := r.Find(place, out)
	must(t, err)
	if len(again.Edits) != 0 || len(again.Kept) != len(ue.Kept) {
		t.Errorf("second run: edits %+v kept %q; first kept %q", again.Edits, again.Kept, ue.Kept)
	}
	return string(out), ue
}

// TestFindSurrogateEscape: a Python runtime writes a file name's byte that is
// not UTF-8 as a lone surrogate, "\udce9" (surrogateescape); the extractor
// reads it as the byte, the file's name, and the rewriter reads it the same
// (it has the extractor's decoder), so the reference is rewritten and not
// kept as "not found", as it was while the rewriter decoded it as U+FFFD.
// The byte in the new text is written back the way the string writes it:
// "\udce9" keeps an ensure_ascii file ASCII (a raw byte would make it
// invalid UTF-8 for the runtime that reads it), a raw byte stays raw.
func TestFindSurrogateEscape(t *testing.T) {
	const dir = "/home/u/.coffer/channel-media"
	r := &migrate.Replacer{
		Resolver: ref.NewLocalResolver(dir, nil, nil),
		Target: func(key string) (string, bool) {
			return "s3://media/" + key, key == "caf\xe9.png"
		},
	}
	for _, tc := range []struct{ name, unit, want string }{
		// json.dumps (ensure_ascii) of os.listdir's name.
		{"escaped",
			`{"role": "user", "content": [{"type": "image", "path": "` + dir + `/caf\udce9.png"}], "note": "caf\u00e9"}`,
			`{"role": "user", "content": [{"type": "image", "path": "s3://media/caf\udce9.png"}], "note": "caf\u00e9"}`},
		{"upper-case hex",
			`{"path": "` + dir + `/caf\uDCE9.png", "note": "caf\u00E9"}`,
			`{"path": "s3://media/caf\uDCE9.png", "note": "caf\u00E9"}`},
		// A tool call's arguments: json.dumps of json.dumps.
		{"embedded",
			`{"tool_calls": [{"function": {"name": "look", "arguments": "{\"path\": \"` + dir + `/caf\\udce9.png\"}"}}]}`,
			`{"tool_calls": [{"function": {"name": "look", "arguments": "{\"path\": \"s3://media/caf\\udce9.png\"}"}}]}`},
		// ensure_ascii=False, written with errors="surrogateescape".
		{"raw byte",
			`{"path": "` + dir + "/caf\xe9.png" + `", "note": "café"}`,
			`{"path": "s3://media/caf` + "\xe9" + `.png", "note": "café"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ue := rewriteLikeExtractor(t, r, ref.Place{Document: "t.json"}, tc.unit)
			if len(ue.Edits) != 1 || len(ue.Kept) != 0 || out != tc.want {
				t.Fatalf("edits %+v kept %q:\n%s\nwant\n%s", ue.Edits, ue.Kept, out, tc.want)
			}
		})
	}
	// U+DC00 to U+DC7F stand for no byte (Python never escapes ASCII): they
	// are U+FFFD to both, and the reference is not the file's.
	ue, err := r.Find(ref.Place{Document: "t.json"}, []byte(`{"path": "`+dir+`/caf\udc69.png"}`))
	if err != nil || len(ue.Edits) != 0 || len(ue.Kept) != 0 {
		t.Fatalf("\\udc69: edits %+v kept %q, %v", ue.Edits, ue.Kept, err)
	}
}
