package trash

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// PurgeKeys deletes for good the blobs of one run of the locked store's
// trash whose keys are given, and nothing else of the run: an erasure
// (mediactl forget) takes one owner's blobs out of every run, where Purge
// and PurgeRun delete whole runs. A key not in the run is not an error
// (another process restored or purged it); the result counts what was
// deleted. A run left without a blob is deleted whole; otherwise its
// manifest still lists the keys it once held.
func PurgeKeys(ctx context.Context, l *storelock.Lock, run string, keys []string) (*PurgeResult, error) {
	_, in, err := lockedRun(l, run)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !reserved(k) {
			want[k] = true
		}
	}
	prefix := Dir + "/" + run + "/"
	var found []store.Entry
	if err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
		if want[strings.TrimPrefix(e.Key, prefix)] {
			found = append(found, e)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("trash: list %s: %w", run, err)
	}
	res := &PurgeResult{Runs: []string{}}
	for _, e := range found {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		err := store.RetryThrottled(ctx, func() error { return in.DeleteInternal(ctx, e.Key) })
		switch {
		case errors.Is(err, store.ErrNotExist):
			continue
		case err != nil:
			return res, fmt.Errorf("trash: purge %s: %w", e.Key, err)
		}
		res.Blobs++
		res.Bytes += e.Size
	}
	if res.Blobs > 0 {
		res.Runs = append(res.Runs, run)
	}
	// A run left without a blob goes whole, its manifest with it.
	left := 0
	if err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
		if !reserved(strings.TrimPrefix(e.Key, prefix)) {
			left++
		}
		return nil
	}); err != nil {
		return res, fmt.Errorf("trash: list %s: %w", run, err)
	}
	if left == 0 {
		if _, _, err := purgeRun(ctx, in, run, nil); err != nil {
			return res, err
		}
	}
	return res, nil
}
