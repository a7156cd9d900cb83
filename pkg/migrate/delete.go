package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// checkRetained is the check after the rewrite (check) and the
// retention model's marking (retain.Mark) in one read of the sessions: the
// report of references still pointing at migrated blobs, and the decision of
// which of from's blobs the sessions keep. mark.CopiedTo are the URL prefixes
// of the proven copies (the destination's objectURL with an empty key): text
// naming a copy there keeps the copy, not the source. rb, when not nil, reads
// every reference to a copy back.
func checkRetained(ctx context.Context, srcs []sessions.Source, from store.Store, res *ref.Resolver, migrated func(key string) bool, maxListed int, mark retain.MarkOptions, rb *readBack) (*CheckReport, *retain.Retention, error) {
	cr, onRef := newCheck(migrated, maxListed, rb)
	mark.Stores = []scan.Target{{Store: from, Resolver: res}}
	mark.OnReference = onRef
	r, err := retain.Mark(ctx, from, srcs, mark)
	if err != nil {
		return nil, nil, err
	}
	cr.finish(r.Scan)
	if r.ListError != "" {
		cr.Complete = false
		cr.Problems = append(cr.Problems, "listing "+r.Store+": "+r.ListError)
	}
	rb.check(ctx, cr)
	return cr, r, nil
}

// DeleteSelection is what --delete-source may remove, and why the rest of
// the proven sources stays.
type DeleteSelection struct {
	Candidates trash.List
	// KeptReferenced counts proven sources that a precise reference still
	// points at (Check).
	KeptReferenced int64
	// KeptRetained counts the others that the retention model keeps because
	// a session names them; KeptYoung those modified after the fence.
	KeptRetained int64
	KeptYoung    int64
	// KeptTemporary counts proven sources still in the store whose names
	// look temporary (blobname.IsTemporary): never removed.
	KeptTemporary int64
	// KeptUnlisted counts proven sources that are no longer regular blobs of
	// the store's listing.
	KeptUnlisted int64
	// CopyGone are sources kept because their copy is no longer in the
	// destination as proven.
	CopyGone []Problem
}

// errIncompleteRead is why delete-source removes nothing (DeleteReport.Refused)
// when the sessions or the store were not read completely: which sources are
// in use is then unknown.
var errIncompleteRead = errors.New("not every session or the whole store could be read, so it is unknown which sources are still in use")

// selectDeletable decides which proven sources may be removed: a source goes
// only when the retention model would let gc remove it (not kept by the
// rule, not younger than cutoff) and, on top of that, its copy is proven, no
// precise reference points at it (ck) and the copy is still in the
// destination with the proven size and digest (Deletable).
func selectDeletable(ctx context.Context, j *Journal, to store.Store, ck *CheckReport, r *retain.Retention, cutoff time.Time, jobs int) (*DeleteSelection, error) {
	if !ck.Complete || !r.Complete {
		return nil, errIncompleteRead
	}
	sel := &DeleteSelection{CopyGone: []Problem{}}
	skip := func(key string) bool {
		if ck.Referenced[key] {
			sel.KeptReferenced++
			return true
		}
		switch r.Keeps(key, cutoff) {
		case retain.KeptReferenced:
			sel.KeptRetained++
		case retain.KeptYoung:
			sel.KeptYoung++
		case retain.KeptTemporary:
			sel.KeptTemporary++
		case retain.KeptUnlisted:
			sel.KeptUnlisted++
		default:
			return false
		}
		return true
	}
	cands, gone, err := deletable(ctx, j, to, skip, jobs)
	sel.Candidates = cands
	sel.CopyGone = append(sel.CopyGone, gone...)
	return sel, err
}

// deletable checks the sources --delete-source may remove: those whose copy
// the journal proves, that skip does not keep, and whose copy is still in the
// destination right now with the proven size and sha256 — a copy deleted or
// replaced since it was proven keeps its source. Each candidate carries the
// size and modification time the source had when it was copied, so that
// trash.Move leaves a source that changed since.
//
// skip is called from one goroutine. Call Deletable only with decisions made
// on a complete read (selectDeletable does).
func deletable(ctx context.Context, j *Journal, to store.Store, skip func(key string) bool, jobs int) (cands trash.List, kept []Problem, err error) {
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
					cands = append(cands, trash.Item{Key: it.key, Size: it.p.Size, ModTime: time.Unix(0, it.p.ModTime)})
				}
				mu.Unlock()
			}
		}()
	}
	for key, p := range j.State().Copied.All() {
		if skip(key) {
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
	slices.SortFunc(cands, func(a, b trash.Item) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(kept, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return cands, kept, nil
}
