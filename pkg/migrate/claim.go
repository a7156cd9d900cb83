package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// A migration leaves a record of itself in its destination before it
// copies anything there: ClaimDir/ID.json in the destination's internal
// folder. With content-addressed names, two stores migrated into one bucket
// share its objects: the second migration finds the first one's copy
// already there and proves it as its own. Nothing in a journal says so;
// the records in the bucket do. A reader that is to delete copies a
// journal proved (forget) deletes them only when every record in the
// bucket (and above its prefix) is of a migration whose journal it read,
// and every journal it read is recorded there.

// ClaimDir is the folder of the migrations' records, in a destination's
// internal folder.
const ClaimDir = "migrations/"

// Claim is a migration's record in its destination.
type Claim struct {
	ID   string    `json:"id"`
	From string    `json:"from"`
	To   string    `json:"to"`
	Time time.Time `json:"time"`
	// Above, set by Claims for a record found above the destination's
	// prefix, is the folder of the bucket it was found in ("" the root).
	// Such a record is not read: only its name is known.
	Above *string `json:"-"`
}

// ClaimName is the name of the record of the migration id, in the
// destination's internal folder.
func ClaimName(id string) string { return ClaimDir + id + ".json" }

// ErrNoInternal is returned for a destination that keeps no internal
// folder, where a migration cannot leave its record.
var ErrNoInternal = errors.New("the destination keeps no internal folder for the migration's record")

// claim writes the record of the journal's migration into dst.
func claim(ctx context.Context, dst store.Store, j *Journal) error {
	st := j.State()
	in, ok := store.Unwrap(dst).(store.Internal)
	if !ok {
		return fmt.Errorf("record the migration in %s: %w", dst.Location(), ErrNoInternal)
	}
	b, err := json.Marshal(Claim{ID: st.ID, From: st.From, To: st.To, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	if err := in.PutInternal(ctx, ClaimName(st.ID), bytes.NewReader(append(b, '\n')), store.PutOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("record the migration in %s: %w", dst.Location(), err)
	}
	return nil
}

// Claims reads the records of the migrations into dst, by ID, and names
// those of the migrations into the folders above its prefix (a store at the
// bucket's root holds the keys below every prefix too). A record that
// cannot be read as one is an error: whose copies it stands for is
// unknown.
func Claims(ctx context.Context, dst store.Store) (map[string]Claim, error) {
	in, ok := store.Unwrap(dst).(store.Internal)
	if !ok {
		return nil, fmt.Errorf("%s: %w", dst.Location(), ErrNoInternal)
	}
	var names []string
	err := in.ListInternal(ctx, ClaimDir, func(e store.Entry) error {
		names = append(names, e.Key)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the migrations' records in %s: %w", dst.Location(), err)
	}
	out := map[string]Claim{}
	for _, name := range names {
		id, ok := strings.CutSuffix(strings.TrimPrefix(name, ClaimDir), ".json")
		if !ok || !validID(id) {
			return nil, fmt.Errorf("%s: %s is no migration's record", dst.Location(), name)
		}
		c, err := readClaim(ctx, in, name)
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", dst.Location(), name, err)
		}
		if c.ID != id {
			return nil, fmt.Errorf("%s: %s holds the record of migration %q", dst.Location(), name, c.ID)
		}
		out[id] = c
	}
	if ab, ok := store.Unwrap(dst).(store.InternalAbove); ok {
		err := ab.ListInternalAbove(ctx, ClaimDir, func(folder string, e store.Entry) error {
			id, ok := strings.CutSuffix(strings.TrimPrefix(e.Key, ClaimDir), ".json")
			if !ok || !validID(id) {
				return fmt.Errorf("%s: %s%s is no migration's record", dst.Location(), folder, e.Key)
			}
			if _, ok := out[id]; !ok {
				out[id] = Claim{ID: id, Above: &folder}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list the migrations' records above %s: %w", dst.Location(), err)
		}
	}
	return out, nil
}

func readClaim(ctx context.Context, in store.Internal, name string) (Claim, error) {
	rc, err := in.OpenInternal(ctx, name)
	if err != nil {
		return Claim{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<10))
	if err != nil {
		return Claim{}, err
	}
	var c Claim
	if err := json.Unmarshal(b, &c); err != nil {
		return Claim{}, err
	}
	return c, nil
}
