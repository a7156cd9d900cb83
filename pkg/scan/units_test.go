package scan_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// valuesSource yields rows as a database does, one Item per row of two
// values (a reference, and a note), with a document and a problem among
// them, then fails when fail is set.
type valuesSource struct {
	values int
	fail   bool
}

func (s valuesSource) String() string { return "values" }
func (s valuesSource) Close() error   { return nil }

func (s valuesSource) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	var c sessions.Counts
	var row []sessions.Value
	for i := range s.values {
		d := sha256.Sum256(fmt.Appendf(nil, "blob %d", i))
		p := ref.Place{Source: "values", Table: "t", Key: fmt.Sprintf("id=%d", i), Offset: -1}
		// One slice for every row, as the sources have it: Values are only
		// valid during the call.
		row = append(row[:0], sessions.Value{Column: "c", Text: []byte(`{"path": "/x/` + hex.EncodeToString(d[:]) + `.png"}`)}, sessions.Value{Column: "note", Text: []byte(`{"seen": true}`)})
		if err := fn(sessions.Item{Place: p, Size: -1, Values: row}); err != nil {
			return c, err
		}
		c.Rows++
		switch i {
		case 300:
			if err := fn(sessions.Item{Place: ref.Place{Source: "values", Table: "broken", Offset: -1}, Size: -1, Err: errors.New("broken table")}); err != nil {
				return c, err
			}
		case 700:
			doc := `{"uri": "/x/` + strings.Repeat("a", 64) + `.png"}`
			if err := fn(sessions.Item{Place: ref.Place{Source: "values", Document: "d.json", Offset: -1}, Size: -1,
				Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil }}); err != nil {
				return c, err
			}
		}
	}
	if s.fail {
		return c, errors.New("the database went away")
	}
	return c, nil
}

// Rows travel to the workers in units: every value of every row is read, a
// problem or a document among them too, and rows read before a source fails
// count.
func TestValuesInUnitsAreAllRead(t *testing.T) {
	for _, fail := range []bool{false, true} {
		for _, values := range []int{1, 255, 256, 257, 1000} {
			var mu sync.Mutex
			var texts int
			rep, err := scan.Run(context.Background(), scan.Options{
				Sources: []sessions.Source{valuesSource{values: values, fail: fail}},
				Jobs:    3,
				Text: func(s []byte) {
					if len(s) > 0 && s[0] == '{' {
						mu.Lock()
						texts++
						mu.Unlock()
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			refs, problems := int64(values), int64(0)
			if values > 300 {
				problems++
			}
			if values > 700 {
				refs++ // the document's
			}
			if fail {
				problems++
			}
			if rep.References != refs || rep.Sources[0].Problems != problems || rep.Complete != (problems == 0) {
				t.Errorf("%d values, failing %v: %d references, %d problems, complete %v; want %d, %d", values, fail,
					rep.References, rep.Sources[0].Problems, rep.Complete, refs, problems)
			}
			if texts != 2*values {
				t.Errorf("%d rows of 2 values, failing %v: Text saw %d values whole", values, fail, texts)
			}
			if rep.DistinctBlobs != refs {
				t.Errorf("%d values: %d distinct blobs, want %d", values, rep.DistinctBlobs, refs)
			}
		}
	}
}

// wideSource yields one row of more values than a unit carries (a
// PostgreSQL table may have 1,600 columns), from a slice it then reuses.
type wideSource struct{ values int }

func (s wideSource) String() string { return "wide" }
func (s wideSource) Close() error   { return nil }

func (s wideSource) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	row := make([]sessions.Value, s.values)
	for i := range row {
		d := sha256.Sum256(fmt.Appendf(nil, "wide %d", i))
		row[i] = sessions.Value{Column: fmt.Sprint("c", i), Text: []byte("/x/" + hex.EncodeToString(d[:]) + ".png")}
	}
	err := fn(sessions.Item{Place: ref.Place{Source: "wide", Table: "t", Key: "id=1", Offset: -1}, Size: -1, Values: row})
	clear(row) // the source's slice: what the scan kept must be its own
	return sessions.Counts{Rows: 1}, err
}

// A row wider than a unit is read whole, every value of it.
func TestRowWiderThanAUnitIsReadWhole(t *testing.T) {
	for _, n := range []int{1023, 1024, 1025, 1600} {
		rep, err := scan.Run(context.Background(), scan.Options{Sources: []sessions.Source{wideSource{values: n}}, Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		if rep.References != int64(n) || rep.DistinctBlobs != int64(n) || !rep.Complete {
			t.Errorf("a row of %d values: %d references, %d distinct, complete %v", n, rep.References, rep.DistinctBlobs, rep.Complete)
		}
	}
}
