package report

import (
	"cmp"
	"context"
	"slices"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
)

// A shard's report (Options.Shard) is made on the shard's blobs only: each
// store's listing keeps them (retain.MarkOptions.Shard), and so do the
// counts. Which figures of the N shards add up to the whole store's, and
// which do not, is what Merge relies on:
//
//   - Every blob is in exactly one shard, and so is every reference: the
//     shard of the key it resolves to (in the first store it resolves
//     inside), where the blob it names, or misses, is listed. Blob and byte
//     counts, an owner's referenced and exclusive blobs, the shared and the
//     unattributed ones, the references, dangling references and blobs, the
//     age, type and size tables, the growth, the policies but the size cap,
//     the trash and the marks (by the key a trashed or marked blob had) all
//     add up.
//   - A session unit may name blobs of several shards. Its units are
//     therefore counted over every reference the shard read, before it kept
//     its own: every shard reads every session, so each gives an owner the
//     same units, those of the whole store.
//   - A size cap decides over all the blobs at once, oldest first: no shard
//     can say what it would free, so a shard's report leaves it out. The
//     days until a file system is full are left out too: a shard grows by
//     its part of the store's growth only.
//
// The references come from a read of the sessions of their own: the
// retention's read keeps only the references it can place in the shard
// without the stores (by what they name), which is not the key's shard for
// a blob of an opaque name.

// shardRefs reads every reference once for a shard's report: it keeps the
// shard's own in mine, for the attribution, and notes of every unit whose
// references fall inside a store how its owners are told (its references
// without an owner of their own, and one reference per agent-runs user it
// names), for the units of the whole store.
type shardRefs struct {
	spec       shard.Spec
	stores     []scan.Target
	companions []func(string) (string, bool)
	mine       *owner.References

	units    map[owner.Unit]*unitRefs
	last     owner.Unit
	lastRefs *unitRefs
}

// unitRefs is how one unit's owners are told: by the unit alone (plain) and
// by a hint per user its agent-runs keys name.
type unitRefs struct {
	plain bool
	hints map[string]string // agent-runs user → the first reference text naming it
}

func newShardRefs(spec shard.Spec, stores []scan.Target, companions []func(string) (string, bool)) *shardRefs {
	return &shardRefs{spec: spec, stores: stores, companions: companions, mine: owner.NewReferences(), units: map[owner.Unit]*unitRefs{}}
}

// read reads the sessions (wrapped by the attributor) for every reference.
func (s *shardRefs) read(ctx context.Context, srcs []sessions.Source, opts Options) (*scan.Report, error) {
	return scan.Run(ctx, scan.Options{Sources: srcs, Jobs: opts.Jobs, MaxListed: opts.MaxListed,
		OnReference: s.add, Progress: opts.Progress, CountOnly: true})
}

// add is the scan's OnReference: one goroutine calls it.
func (s *shardRefs) add(f scan.Found) {
	in, key := -1, ""
	for i, t := range s.stores {
		if st, k := t.Resolver.Resolve(f.Ref); st == ref.Inside {
			in, key = i, k
			break
		}
	}
	if in < 0 {
		return // inside no store: no blob of anyone's, as attribute has it
	}
	u := owner.UnitOf(f.Place)
	ur := s.lastRefs
	if ur == nil || u != s.last {
		if ur = s.units[u]; ur == nil {
			ur = &unitRefs{}
			s.units[u] = ur
		}
		s.last, s.lastRefs = u, ur
	}
	if hint := owner.Hint(f.Ref); hint == "" {
		ur.plain = true
	} else if user, _, ok := owner.AgentRunsOwner(hint); ok {
		if ur.hints == nil {
			ur.hints = map[string]string{}
		}
		if _, had := ur.hints[user]; !had {
			ur.hints[user] = hint
		}
	}
	if retain.InShard(s.spec, key, s.companions[in]) {
		s.mine.Add(f)
	}
}

// setUnits gives the owners of rep their units of the whole store, and the
// unattributed units theirs, as attribute counts them: a unit once for each
// owner its references name.
func (s *shardRefs) setUnits(attr *owner.Attributor, maxListed int, rep *Report) {
	units := map[string]int64{}
	var unattributed []owner.Unit
	for u, ur := range s.units {
		var counted []string // the owners this unit counted for; "" unattributed
		count := func(o owner.Owner) {
			id := ""
			if o.Known() {
				id = "\x00" + o.ID
			}
			if slices.Contains(counted, id) {
				return
			}
			counted = append(counted, id)
			if id == "" {
				unattributed = append(unattributed, u)
			} else {
				units[o.ID]++
			}
		}
		if ur.plain {
			count(attr.Owner(u, ""))
		}
		for _, hint := range ur.hints {
			count(attr.Owner(u, hint))
		}
	}
	for _, o := range rep.Owners {
		o.Units = units[o.ID]
	}
	slices.SortFunc(unattributed, func(a, b owner.Unit) int { return cmp.Compare(a.String(), b.String()) })
	rep.Unattributed.Units = int64(len(unattributed))
	if len(unattributed) > maxListed {
		unattributed, rep.Truncated = unattributed[:maxListed], true
	}
	rep.Unattributed.UnitList = append([]owner.Unit{}, unattributed...)
}
