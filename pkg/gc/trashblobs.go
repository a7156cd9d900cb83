package gc

import (
	"context"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/store"
)

// TrashBlobs moves the listed blobs of st into a new trash run, exactly as
// Execute moves a plan's candidates: each is checked right before it moves and
// left in place when its size or modification time is no longer the one
// given (a writer touched it), and the run gets a manifest, so that Restore
// puts it back. migrate --delete-source removes its proven sources this way.
// The caller is responsible for the decision that the blobs may go.
func TrashBlobs(ctx context.Context, st store.Store, list []Candidate, opts ExecOptions) (*Result, error) {
	b := &blobs{idx: ref.NewIndex()}
	ids := make([]uint32, len(list))
	for i, c := range list {
		b.add(c.Key, c.Size, c.ModTime)
		ids[i] = uint32(i)
	}
	p := &Plan{
		Store:      st.Location(),
		Complete:   true,
		Fence:      time.Now(),
		Cutoff:     time.Now(), // a blob modified from now on is a writer's, not ours
		Candidates: Candidates{ids: ids, blobs: b},
	}
	return p.Execute(ctx, st, opts)
}
