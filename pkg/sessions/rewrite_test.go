package sessions

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
)

// journal records what a rewrite prepared and committed, in order, like the
// migrate journal would.
type journal struct {
	prepared  []Change
	committed []Change
	events    []string // "prepare PLACE" / "commit PLACE"
	failAt    int      // Prepare fails on its failAt-th call (1-based); 0: never
}

var errPrepare = errors.New("journal disk full")

func (j *journal) options(retries int) RewriteOptions {
	return RewriteOptions{
		Retries: retries,
		Prepare: func(ch Change) error {
			if j.failAt > 0 && len(j.prepared)+1 == j.failAt {
				return errPrepare
			}
			j.prepared = append(j.prepared, cloneChange(ch))
			j.events = append(j.events, "prepare "+ch.Place.String())
			return nil
		},
		Committed: func(ch Change) {
			j.committed = append(j.committed, cloneChange(ch))
			j.events = append(j.events, "commit "+ch.Place.String())
		},
	}
}

// checkSawWalk checks that an Edit saw exactly the places Walk reports, in
// Walk's order, except notOffered: places Walk reads that the rewriter does not
// write (a number, a materialized view), each of which Walk must report.
func checkSawWalk(t *testing.T, seen []ref.Place, items []walked, notOffered ...string) {
	t.Helper()
	skip := map[string]bool{}
	for _, p := range notOffered {
		skip[p] = true
	}
	var places []ref.Place
	for _, it := range items {
		if skip[it.Place.String()] {
			delete(skip, it.Place.String())
			continue
		}
		places = append(places, it.Place)
	}
	if !reflect.DeepEqual(seen, places) {
		t.Errorf("Edit saw\n%v\nWalk reports, without the places not offered\n%v", seen, places)
	}
	for p := range skip {
		t.Errorf("%s: expected among Walk's places, not there", p)
	}
}

func cloneChange(ch Change) Change {
	return Change{Place: ch.Place, Old: bytes.Clone(ch.Old), New: bytes.Clone(ch.New)}
}

// rollbackEdit puts back the Old of every committed change whose place still holds
// its New: what `migrate rollback` does with a journal.
func (j *journal) rollbackEdit() Edit {
	byPlace := map[ref.Place]Change{}
	for _, ch := range j.committed {
		byPlace[ch.Place] = ch
	}
	return func(p ref.Place, cur []byte) ([]byte, error) {
		ch, ok := byPlace[p]
		if !ok || !bytes.Equal(cur, ch.New) {
			return nil, nil
		}
		return ch.Old, nil
	}
}

// replaceEdit replaces old by new in every unit that contains it, and records the
// places it was called for.
func replaceEdit(old, new string, seen *[]ref.Place) Edit {
	return func(p ref.Place, cur []byte) ([]byte, error) {
		if seen != nil {
			*seen = append(*seen, p)
		}
		if !bytes.Contains(cur, []byte(old)) {
			return nil, nil
		}
		return bytes.ReplaceAll(cur, []byte(old), []byte(new)), nil
	}
}

func openRewriter(t *testing.T, spec string) Rewriter {
	t.Helper()
	w, err := OpenRewriter(context.Background(), spec, Options{})
	if err != nil {
		t.Fatalf("OpenRewriter(%q): %v", spec, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// unitErrors returns the places named by a rewrite's error, as strings.
func unitErrors(t *testing.T, err error) []*UnitError {
	t.Helper()
	var re *RewriteError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a *RewriteError", err)
	}
	return re.Units
}

func TestOpenRewriterRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "coffer.db")
	createCofferDB(t, db)
	for _, tc := range []struct {
		spec, query, want string
	}{
		{"sqlite:" + db, "SELECT id, content FROM chat_messages", "session query"},
		{dir, "SELECT 1", "session query"},
		{"s3://bucket/sessions?region=us-east-1", "", "bucket"},
		{"mem://", "", "not supported yet"},
		{"ftp://host/x", "", "unsupported scheme"},
		{"sqlite://" + db, "", "sqlite:PATH"},
		{db, "", "sqlite:" + db},
	} {
		w, err := OpenRewriter(ctx, tc.spec, Options{Query: tc.query})
		if err == nil {
			w.Close()
			t.Errorf("OpenRewriter(%q, query %q): no error", tc.spec, tc.query)
			continue
		}
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenRewriter(%q, query %q) = %v; want a usage error mentioning %q", tc.spec, tc.query, err, tc.want)
		}
	}
	// A missing folder is reported by Rewrite, as by Walk.
	w := openRewriter(t, filepath.Join(dir, "nope"))
	c, err := w.Rewrite(ctx, replaceEdit("a", "b", nil), RewriteOptions{})
	if err == nil || c != (RewriteCounts{}) {
		t.Errorf("Rewrite of a missing folder: counts %+v, err %v", c, err)
	}
}

func TestRewriteErrorMessage(t *testing.T) {
	var units []*UnitError
	for i := range maxListedUnits + 3 {
		units = append(units, &UnitError{Place: ref.Place{Source: "s", Document: "d" + strings.Repeat("x", i%3), Offset: -1}, Err: errors.New("boom")})
	}
	units = append(units, &UnitError{Place: ref.Place{Source: "s", Table: "t", Key: "id=1", Column: "c", Offset: -1}, Err: ErrConflict})
	err := &RewriteError{Source: "s", Units: units}
	msg := err.Error()
	if !strings.HasPrefix(msg, "s: 104 units not rewritten\n  d: boom\n  dx: boom") || !strings.HasSuffix(msg, "… and 4 more") {
		t.Errorf("message = %q", msg)
	}
	if !errors.Is(err, ErrConflict) {
		t.Error("errors.Is(RewriteError, ErrConflict) = false")
	}
	one := &RewriteError{Source: "s", Units: units[len(units)-1:]}
	if got := one.Error(); got != "s: 1 unit not rewritten\n  t[id=1].c: "+ErrConflict.Error() {
		t.Errorf("message = %q", got)
	}
}
