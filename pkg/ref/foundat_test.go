package ref

import (
	"reflect"
	"strings"
	"testing"
)

type foundPair struct {
	Ref   Reference
	Place Place
}

// bothWays extracts data as a document and as a column value, once with Found
// and once with FoundAt asking every place, and returns both results.
func bothWays(data []byte) (eager, lazy []foundPair) {
	at := Place{Source: "s", Document: "d.json", Offset: -1}
	e := &Extractor{Found: func(r Reference, p Place) { eager = append(eager, foundPair{r, p}) }}
	_ = e.Document(strings.NewReader(string(data)), at)
	e.Value(data, at)
	l := &Extractor{FoundAt: func(r Reference, a *At) {
		p := a.Place()
		if a.Place() != p {
			panic("At.Place changed between calls")
		}
		lazy = append(lazy, foundPair{r.Clone(), p}) // r is only valid during the call
	}}
	_ = l.Document(strings.NewReader(string(data)), at)
	l.Value(data, at)
	return eager, lazy
}

// FoundAt reports what Found reports, in the same order, with the same places:
// in strings, pairs, text, and JSON embedded one and two levels deep, in a
// document and in a column value.
func TestFoundAtMatchesFound(t *testing.T) {
	h := digest("lazy") + ".png"
	p := "/srv/agent/.forge/files/inbound/" + h
	for _, doc := range []string{
		`{"messages":[{"parts":[{"media":{"uri":"` + p + `"}}]}]}`,
		`{"m":[{"tool_calls":[{"function":{"arguments":"{\"path\":\"` + p + `\",\"mode\":\"read\"}"}}]}]}`,
		`{"a":"{\"b\":\"{\\\"path\\\":\\\"` + p + `\\\"}\"}"}`,
		`{"a/b~c":[{"bucket":"media","key":"agent-inputs/` + h + `"}]}`,
		`{"x":"saved to ` + p + ` and file:///srv/agent/.forge/files/inbound/` + h + `."}`,
		`[{"path":"` + p + `"},"{\"uri\":\"s3://media/` + h + `\"}"]`,
		`{"path":"{\"bucket\":\"b\",\"path\":\"` + h + `\"}"}`,
		`{"args":"[\"` + p + `\", \"{\\\"path\\\": \\\"` + p + `\\\"}\"]"}`,
		`{"uri":"` + p + `"}{"uri":"` + p + `"}`,
	} {
		eager, lazy := bothWays([]byte(doc))
		if len(eager) == 0 {
			t.Errorf("%s: nothing found", doc)
		}
		if !reflect.DeepEqual(eager, lazy) {
			t.Errorf("%s:\nFound   %+v\nFoundAt %+v", doc, eager, lazy)
		}
	}
}

func FuzzFoundAtMatchesFound(f *testing.F) {
	h := digest("f") + ".png"
	for _, s := range []string{
		`{"uri":"/srv/inbound/` + h + `"}`,
		`{"a":"{\"path\":\"../../etc/` + h + `\"}"}`,
		`[{"bucket":"b","path":"p/../../x"}]`,
		`{"a":"{\"b\":\"{\\\"path\\\":\\\"/x/` + h + `\\\"}\"}"}`,
		`"see /srv/agent/.forge/files/inbound/` + h + `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		eager, lazy := bothWays(data)
		if !reflect.DeepEqual(eager, lazy) {
			t.Fatalf("Found %+v\nFoundAt %+v", eager, lazy)
		}
	})
}
