package forget

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReadOwners(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		cut  int // the line of a *CutListError, or 0
	}{
		{"alice\nbob\n", []string{"alice", "bob"}, 0},
		{"\ufeff# erasure 4711\r\nSmith, John\r\n\r\n  Anna  \r\n", []string{"Smith, John", "Anna"}, 0},
		{"\ufeff\nalice\n", []string{"alice"}, 0},
		{"", nil, 0},
		{"# nobody\n\n", nil, 0},
		{"# a comment without an end", nil, 1},
		{"   \n\t", nil, 0},
		{"alice\nSmith", nil, 2},
		{"alice\nuser-12", nil, 2},
		{"alice\r", nil, 1},
		{"a\u00a0b\n", []string{"a\u00a0b"}, 0},
	} {
		got, err := ReadOwners(strings.NewReader(c.in))
		var ce *CutListError
		switch {
		case c.cut > 0:
			if !errors.As(err, &ce) || ce.Line != c.cut {
				t.Errorf("%q: %v %v, want the list refused as cut at line %d", c.in, got, err, c.cut)
			}
		case err != nil || !slices.Equal(got, c.want):
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzReadOwners: a list is read whole or refused; each id is a whole
// line of it, trimmed, never empty, never a comment; a list that ends with
// a line feed is never refused as cut.
func FuzzReadOwners(f *testing.F) {
	for _, s := range []string{"alice\nbob\n", "\ufeff# c\r\nSmith, John\r\n", "a\nb", "", "#\n\n  x  \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ReadOwners(strings.NewReader(in))
		var ce *CutListError
		if err != nil {
			if !errors.As(err, &ce) {
				t.Fatalf("%q: %v", in, err)
			}
			if strings.HasSuffix(in, "\n") {
				t.Fatalf("%q ends with a line feed, refused as cut: %v", in, err)
			}
			return
		}
		lines := strings.Split(strings.TrimPrefix(in, "\ufeff"), "\n")
		for _, id := range got {
			if id == "" || strings.HasPrefix(id, "#") || id != strings.TrimSpace(id) {
				t.Fatalf("%q: id %q", in, id)
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == id }) {
				t.Fatalf("%q: id %q is no line of it", in, id)
			}
		}
	})
}
