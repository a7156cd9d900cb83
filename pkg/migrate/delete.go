package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/store"
)

// Deletable decides which sources --delete-source may remove: those whose copy
// the journal proves, that no session references (referenced, from Check), and
// whose copy is still in the destination right now with the proven size and
// sha256 — a copy deleted or replaced since it was proven keeps its source.
// Each candidate carries the size and modification time the source had when it
// was copied, so that gc.TrashBlobs leaves a source that changed since.
//
// Call it only with a Check that read every session (CheckReport.Complete).
func Deletable(ctx context.Context, j *Journal, to store.Store, referenced map[string]bool, jobs int) (cands []gc.Candidate, kept []Problem, err error) {
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	type item struct {
		key string
		p   Proof
	}
	work := make(chan item)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				attrs, err := statRetry(ctx, to, it.key)
				var reason string
				switch {
				case errors.Is(err, store.ErrNotExist):
					reason = "the copy is gone from the destination: source kept (run migrate again to copy it)"
				case err != nil:
					reason = fmt.Sprintf("the copy could not be checked (%v): source kept", err)
				case attrs.Size != it.p.Size || attrs.Metadata[MetadataKey] != it.p.Digest():
					reason = "the copy in the destination is no longer the proven one: source kept"
				}
				mu.Lock()
				if reason != "" {
					kept = append(kept, Problem{Key: it.key, Reason: reason})
				} else {
					cands = append(cands, gc.Candidate{Key: it.key, Size: it.p.Size, ModTime: time.Unix(0, it.p.ModTime)})
				}
				mu.Unlock()
			}
		}()
	}
	for key, p := range j.State().Copied {
		if referenced[key] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		work <- item{key, p}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, kept, err
	}
	slices.SortFunc(cands, func(a, b gc.Candidate) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(kept, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return cands, kept, nil
}
