package retaintest

import (
	"encoding/json"
	"testing"
)

// The spellings are the real serializers': GoJSON is what encoding/json
// writes, and every style decodes back to the same string.
func TestQuoteMatchesTheSerializers(t *testing.T) {
	for _, s := range []string{"/srv/a&b/<x>.png", "第二版 final copy", "M\u00e4rz \U0001F600", "tab\tnew\nline \"q\" \\ \u2028", "\x01"} {
		want, _ := json.Marshal(s)
		if got := Quote(s, GoJSON); got != string(want) {
			t.Errorf("Quote(%q, GoJSON) = %s, encoding/json writes %s", s, got, want)
		}
		for _, st := range Styles {
			var back string
			if err := json.Unmarshal([]byte(Quote(s, st)), &back); err != nil || back != s {
				t.Errorf("Quote(%q, %v) = %s decodes to %q (%v)", s, st, Quote(s, st), back, err)
			}
		}
	}
	if got, want := Quote("/a/第", PythonASCII), `"/a/\u7b2c"`; got != want {
		t.Errorf("python style: %s, want %s", got, want)
	}
	if got, want := Quote("/a/b", EscapedSlash), `"\/a\/b"`; got != want {
		t.Errorf("escaped-slash style: %s, want %s", got, want)
	}
}

func TestCasesAreValidJSONWithDistinctBlobs(t *testing.T) {
	seen := map[string]string{}
	for _, c := range Cases() {
		if !json.Valid([]byte(c.Doc)) {
			t.Errorf("%s: not valid JSON: %s", c.Name, c.Doc)
		}
		if other, dup := seen[c.Blob]; dup {
			t.Errorf("%s and %s plant the same blob %s", c.Name, other, c.Blob)
		}
		seen[c.Blob] = c.Name
	}
	if len(seen) < 1000 {
		t.Errorf("only %d cases", len(seen))
	}
}
