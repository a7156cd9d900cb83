package gc

import (
	"context"
	"fmt"
	"time"

	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// ExecOptions configure Execute.
type ExecOptions struct {
	// NoTrash deletes permanently instead of moving into the trash.
	NoTrash bool
	// Jobs is how many blobs are removed at once; 0 lets package trash choose
	// (32 requests on buckets, 1 on local stores, where a rename is cheap).
	Jobs int
	// Now names the run; zero means time.Now().
	Now time.Time
	// Progress, when set, is told about each blob removed.
	Progress interface{ Add(int64) }
	// Split names the split a shard's run is part of (trash.Options.Split).
	Split string
	// Deferred, with NoTrash, moves the candidates aside into a run and
	// deletes nothing (trash.Options.Deferred): Run deletes the run once the
	// sessions were checked again.
	Deferred bool
	// Keep, when set, says which candidates stay after all: a session saved
	// since the plan names them (reported as skipped, NamedDuringRun).
	Keep func(key string) bool
	// Log, with NoTrash on a bucket whose service keeps deleted objects,
	// records each batch of deletes before it is sent (trash.Options.Log),
	// so that gc restore can bring the blobs back from the versions.
	Log *trash.DeletedLog
}

// Execute removes the plan's candidates from the locked store, through
// trash.Move. It refuses an incomplete plan and a plan made for another
// store. Each candidate is checked again right before it goes and skipped when
// it changed since the plan (size or modification time) or is newer than the
// plan's cutoff: a writer re-created it. An unsafe trash stops the run with an
// error wrapping trash.ErrUnusable; an interrupted run returns ctx's error,
// with the candidates not attempted counted in Result.NotAttempted.
func (p *Plan) Execute(ctx context.Context, l *storelock.Lock, opts ExecOptions) (*trash.Result, error) {
	if !p.Complete {
		return nil, ErrIncomplete
	}
	if err := l.Held(); err != nil {
		return nil, err
	}
	if loc := l.Store().Location(); loc != p.Store {
		return nil, fmt.Errorf("gc: the plan is for %s, not %s", p.Store, loc)
	}
	var items trash.Items = planItems{p.Candidates}
	var kept []trash.Skip
	if opts.Keep != nil {
		var goes trash.List
		for c := range p.Candidates.All() {
			if opts.Keep(c.Key) {
				kept = append(kept, trash.Skip{Key: c.Key, Reason: NamedDuringRun})
				continue
			}
			goes = append(goes, trash.Item{Key: c.Key, Size: c.Size, ModTime: c.ModTime})
		}
		items = goes
	}
	res, err := trash.Move(ctx, l, items, trash.Options{
		NoTrash: opts.NoTrash,
		Jobs:    opts.Jobs,
		// How dense the candidates are in the store's listing: on a bucket it
		// decides how they are checked again (see trash.Options).
		StoreBlobs: p.Blobs,
		Now:        opts.Now,
		Cutoff:     p.Cutoff,
		Progress:   opts.Progress,
		Split:      opts.Split,
		Deferred:   opts.Deferred,
		Log:        opts.Log,
		// A run by age removes referenced blobs on purpose: a later check
		// of the trash against the sessions leaves it alone.
		Expired: p.Policy == Age && !p.keepReferenced,
	})
	if res != nil && len(kept) > 0 {
		res.Skipped = append(res.Skipped, kept...)
	}
	return res, err
}

// planItems are a plan's candidates as trash.Items.
type planItems struct{ c Candidates }

func (p planItems) Len() int { return p.c.Len() }
func (p planItems) At(i int) trash.Item {
	c := p.c.At(i)
	return trash.Item{Key: c.Key, Size: c.Size, ModTime: c.ModTime}
}
