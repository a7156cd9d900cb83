package forget

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/store"
)

// journals are migrate's journals of the stores: Options.Journal, and each
// local store's default ones (.mediactl/migrate/*.jsonl), by store index
// (-1: the given one, for the store it names, or the only store).
func (r *run) journals() map[string]int {
	out := map[string]int{}
	for s, t := range r.stores {
		l, ok := t.Store.(store.Local)
		if !ok {
			continue
		}
		found, _ := filepath.Glob(filepath.Join(l.Dir(), store.InternalDir, "migrate", "*.jsonl"))
		for _, p := range found {
			out[p] = s
		}
	}
	if r.opts.Journal != "" {
		if _, ok := out[r.opts.Journal]; !ok {
			out[r.opts.Journal] = -1
		}
	}
	return out
}

// deleteCopies deletes the proven copies, in the bucket a journal migrated
// to, of the blobs erased (pending, less failed). A copy whose size or
// sha256 metadata is no longer the proven one is left alone and said.
func (r *run) deleteCopies(ctx context.Context, pending map[ck]*Blob, failed map[ck]bool) error {
	var errs []error
	paths := r.journals()
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		s := paths[p]
		j, err := migrate.LoadJournal(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st := j.State()
		if s < 0 {
			s = slices.Index(r.rep.Stores, st.From)
			if s < 0 && len(r.stores) == 1 {
				s = 0
			}
			if s < 0 {
				errs = append(errs, fmt.Errorf("journal %s: migrated %s, which is none of the stores", p, st.From))
				continue
			}
		}
		var dst store.Store
		for c, b := range pending {
			if c.s != s || failed[c] {
				continue
			}
			proof, ok := st.Copied.Get(c.key)
			if !ok {
				continue
			}
			if dst == nil {
				if dst, err = store.Open(ctx, st.To); err != nil {
					errs = append(errs, fmt.Errorf("journal %s: open %s: %w", p, store.Redact(st.To), err))
					break
				}
				defer dst.Close()
			}
			e, err := dst.Stat(ctx, c.key)
			switch {
			case errors.Is(err, store.ErrNotExist):
				continue // gone already
			case err != nil:
				errs = append(errs, fmt.Errorf("copy %s in %s: %w", c.key, dst.Location(), err))
				failed[c] = true
				continue
			case e.Size != proof.Size:
				errs = append(errs, fmt.Errorf("copy %s in %s is %d bytes, not the %d the journal proved: left alone", c.key, dst.Location(), e.Size, proof.Size))
				continue
			case e.Metadata[migrate.MetadataKey] != proof.Digest():
				// Other bytes under the key since the copy was proven:
				// not the erased blob's copy, and perhaps someone's.
				errs = append(errs, fmt.Errorf("copy %s in %s does not carry the sha256 the journal proved: left alone", c.key, dst.Location()))
				continue
			}
			if err := dst.Delete(ctx, c.key); err != nil && !errors.Is(err, store.ErrNotExist) {
				errs = append(errs, fmt.Errorf("delete copy %s in %s: %w", c.key, dst.Location(), err))
				failed[c] = true
				continue
			}
			b.copies = append(b.copies, "copy "+dst.Location()+" ("+c.key+")")
		}
	}
	return errors.Join(errs...)
}
