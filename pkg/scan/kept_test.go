package scan_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The extractor hands each reference to the workers as a view of its parse
// buffer, valid only during the call; a reference the report lists outlives
// the parse only as a copy. Many documents, with dangling and outside
// references of equal length in every shape (whole values, words in text,
// {bucket, path}-free pairs, JSON in a string), each repeated so that the
// repeat test sees them: every listed reference is exactly what its document
// says, however much was parsed after it.
func TestListedReferencesOutliveTheParse(t *testing.T) {
	root, names := forgeDir(t, "kept")
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	var wantDangling, wantOutside []string
	for d := range 40 {
		var msgs []string
		for i := range 25 {
			gone := missingName(fmt.Sprintf("gone-%d-%d", d, i))
			abs := inbound + "/" + gone
			esc := fmt.Sprintf("/etc/%s", missingName(fmt.Sprintf("out-%d-%d", d, i)))
			msgs = append(msgs,
				fmt.Sprintf(`{"parts":[{"media":{"uri":%q}},{"media":{"uri":%q}}]}`, abs, abs),
				fmt.Sprintf(`{"content":"saved to %s, and again %s."}`, abs, abs),
				fmt.Sprintf(`{"tool_calls":[{"function":{"arguments":"{\"path\": \"%s\"}"}}]}`, esc),
				fmt.Sprintf(`{"parts":[{"media":{"uri":%q}}]}`, inbound+"/"+names[0]))
			wantDangling = append(wantDangling, abs, abs, abs, abs)
			wantOutside = append(wantOutside, esc)
		}
		writeSession(t, root, fmt.Sprintf("t-%03d.json", d), `{"messages":[`+strings.Join(msgs, ",\n")+`]}`)
	}
	rep := run(t, root, 2)
	if rep.DanglingReferences != int64(len(wantDangling)) || len(rep.Dangling) != len(wantDangling) || rep.Truncated {
		t.Fatalf("dangling references = %d, %d listed, want %d", rep.DanglingReferences, len(rep.Dangling), len(wantDangling))
	}
	sorted := func(fs []string) []string { sort.Strings(fs); return fs }
	var gotDangling, gotOutside []string
	for _, f := range rep.Dangling {
		if f.Ref.Path != f.Ref.Raw || f.Key != filepath.Base(f.Ref.Raw) {
			t.Errorf("dangling %+v: path or key differ from its text", f)
		}
		gotDangling = append(gotDangling, f.Ref.Raw)
	}
	for _, f := range rep.Outside {
		gotOutside = append(gotOutside, f.Ref.Raw)
	}
	if g, w := strings.Join(sorted(gotDangling), "\n"), strings.Join(sorted(wantDangling), "\n"); g != w {
		t.Errorf("listed dangling references differ from the documents':\n%.2000s", g)
	}
	if g, w := strings.Join(sorted(gotOutside), "\n"), strings.Join(sorted(wantOutside), "\n"); g != w {
		t.Errorf("listed outside references differ from the documents':\ngot  %.1000s\nwant %.1000s", g, w)
	}
}
