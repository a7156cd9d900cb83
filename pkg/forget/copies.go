package forget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
)

// clockLag is how far behind the run's own clock a time a file system
// stamps may be: Linux stamps a file with the kernel's coarse clock, up to a
// tick (10 ms at HZ=100) behind time.Now, so a copy written right after the
// run began may carry an older time. A copy stamped that little before the
// run began counts as written during it (and stays). A bucket's
// Last-Modified in whole seconds is not covered: see docs/forget.md.
const clockLag = 10 * time.Millisecond

// A dest is a bucket migrate copied a store's blobs to, as the journals
// say: its proven copies, and the resolvers that place a session's
// reference to a copy in it (its URL, the names the sessions call it, and
// the folders the rewrites say it is mounted at).
type dest struct {
	st   store.Store
	loc  string
	res  []*ref.Resolver
	from []journalOf
	// mounts are the folders (the bucket's root and its prefix) the
	// rewrites named copies below.
	mounts []string
}

// journalOf is one journal of a dest: the store it migrated (an index of
// the run's stores) and what it proved.
type journalOf struct {
	path   string
	s      int
	proofs *migrate.Proofs
	// id names the migration, and its record in the bucket.
	id string
}

// proof is the copy of key this migration proved, and the store it came
// from.
func (d *dest) proof(key string) (migrate.Proof, int, bool) {
	for _, j := range d.from {
		if p, ok := j.proofs.Get(key); ok {
			return p, j.s, true
		}
	}
	return migrate.Proof{}, -1, false
}

// journals are migrate's journals of the stores: Options.Journal, and each
// local store's default ones (.mediactl/migrate/*.jsonl), by store index
// (-1: the given one, for the store it names, or the only store).
func (r *run) journals() map[string]int {
	out := map[string]int{}
	for s, t := range r.stores {
		l, ok := store.Unwrap(t.Store).(store.Local)
		if !ok {
			continue
		}
		found, _ := filepath.Glob(filepath.Join(l.Dir(), store.InternalDir, "migrate", "*.jsonl"))
		for _, p := range found {
			out[p] = s
		}
	}
	if r.opts.Journal != "" {
		given := []string{r.opts.Journal}
		// A sharded migration's journals lie beside the one given.
		shards, err := migrate.ShardJournals(r.opts.Journal)
		if err != nil {
			r.fail(fmt.Sprintf("forget: the shards' journals of %s: %v", r.opts.Journal, err))
		}
		for _, p := range append(given, shards...) {
			if _, ok := out[p]; !ok {
				out[p] = -1
			}
		}
	}
	return out
}

// loadDests reads the journals and opens the buckets they copied to. A
// journal that cannot be read, or a bucket that cannot be opened, is a
// problem (the erasure is not complete), and the rest goes on. It also
// says which trash runs the journals keep outside the stores that this run
// does not search.
func (r *run) loadDests(ctx context.Context) {
	paths := r.journals()
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	slices.Sort(names)
	byLoc := map[string]*dest{}
	for _, p := range names {
		s := paths[p]
		j, err := migrate.LoadJournal(p)
		if err != nil {
			r.fail(fmt.Sprintf("forget: %v", err))
			continue
		}
		st := j.State()
		if s < 0 {
			s = slices.Index(r.rep.Stores, st.From)
			if s < 0 && len(r.stores) == 1 {
				s = 0
			}
			if s < 0 {
				r.fail(fmt.Sprintf("forget: journal %s: migrated %s, which is none of the stores", p, st.From))
				continue
			}
		}
		r.trashElsewhere(p, st)
		if st.ID != "" {
			// Its record in the bucket is this run's, copies or none.
			r.ownIDs[st.ID] = true
		}
		if st.To == "" || st.Copied.Len() == 0 {
			continue
		}
		dst, err := store.Open(ctx, st.To)
		if err != nil {
			r.fail(fmt.Sprintf("forget: journal %s: open %s: %v", p, store.Redact(st.To), err))
			continue
		}
		d := byLoc[dst.Location()]
		if d == nil {
			d = &dest{st: dst, loc: dst.Location()}
			res := scan.NewResolver(dst, r.opts.Bases)
			if r.opts.Resolver != nil {
				res = r.opts.Resolver(dst)
			}
			if res != nil {
				d.res = append(d.res, res)
			}
			byLoc[d.loc] = d
			r.dests = append(r.dests, d)
			r.rep.Buckets = append(r.rep.Buckets, d.loc)
		} else {
			dst.Close()
		}
		d.from = append(d.from, journalOf{path: p, s: s, proofs: st.Copied, id: st.ID})
		prefix := ""
		if b, ok := store.Unwrap(d.st).(store.Bucket); ok {
			prefix = b.Prefix()
		}
		for _, m := range mounts(st, prefix) {
			if !slices.Contains(d.mounts, m) {
				d.mounts = append(d.mounts, m)
				d.res = append(d.res, ref.NewLocalResolver(m, nil, r.opts.Bases))
			}
		}
	}
}

// trashElsewhere notes the trash runs the journal p keeps in a folder
// outside the store that this run does not search and that are still
// there.
func (r *run) trashElsewhere(p string, st *migrate.JournalState) {
	for _, tr := range st.Trash {
		if tr.TrashDir == "" || slices.ContainsFunc(r.tdirs, func(td *trashDir) bool { return sameDir(tr.TrashDir, td.dir) }) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(tr.TrashDir, tr.Run)); err != nil {
			continue // purged, or put back
		}
		if slices.Contains(r.rep.TrashNotSearched, tr.TrashDir) {
			continue
		}
		r.rep.TrashNotSearched = append(r.rep.TrashNotSearched, tr.TrashDir)
		r.fail(fmt.Sprintf("forget: trash run %s is kept in %s (migrate's journal %s says so), which this run did not search: the forgotten owners' blobs in it are not erased", tr.Run, tr.TrashDir, p))
	}
}

// sameDir reports whether a and b are one folder.
func sameDir(a, b string) bool {
	// One folder under two names (a symlink, a bind mount) is the same
	// file; a folder that cannot be looked at is compared by its path.
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	real := func(p string) string {
		if q, err := filepath.EvalSymlinks(p); err == nil {
			p = q
		}
		if q, err := filepath.Abs(p); err == nil {
			p = q
		}
		return filepath.Clean(p)
	}
	return real(a) == real(b)
}

// mounts are the folders where the journal's rewrites say the bucket's
// keys are: a rewrite into a path (a template that is no URL) names the
// copy of key as MOUNT/PREFIX/key. Each is the folder of the keys (the
// mount of the bucket's root, then its prefix).
func mounts(st *migrate.JournalState, prefix string) []string {
	var out []string
	for _, recs := range st.Units {
		for _, rec := range recs {
			for _, e := range rec.Edits {
				if slices.ContainsFunc(out, func(m string) bool { return strings.HasPrefix(e.New, m+"/") }) {
					continue
				}
				for _, text := range unescaped(e.New) {
					if m, ok := mountOf(text, prefix, st.Copied); ok && !slices.Contains(out, m) {
						out = append(out, m)
						break
					}
				}
			}
		}
	}
	return out
}

// mountOf is the folder of the keys that text, a clean absolute path,
// names a proven copy below: ROOT/PREFIX for text ROOT/PREFIX/KEY.
func mountOf(text, prefix string, proofs *migrate.Proofs) (string, bool) {
	if !strings.HasPrefix(text, "/") || path.Clean(text) != text {
		return "", false
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '/' {
			continue
		}
		k, ok := strings.CutPrefix(text[i+1:], prefix)
		if !ok || k == "" {
			continue
		}
		if _, ok := proofs.Get(k); ok {
			return path.Clean("/" + text[:i] + "/" + prefix), true
		}
	}
	return "", false
}

// unescaped are the spellings a rewritten reference may stand for: the
// bytes as stored, and those bytes read as the inside of a JSON string,
// once and twice (JSON inside a JSON string).
func unescaped(s string) []string {
	out := []string{s}
	for range 2 {
		if !strings.Contains(s, `\`) {
			break
		}
		var u string
		if json.Unmarshal([]byte(`"`+s+`"`), &u) != nil {
			break
		}
		s = u
		out = append(out, s)
	}
	return out
}

// eachInDest calls fn for every bucket a reference names a key of, with
// that key, by its URL, a name the sessions call it, or a folder it is
// mounted at.
func (r *run) eachInDest(x ref.Reference, fn func(c ck)) {
	for d, ds := range r.dests {
		for _, res := range ds.res {
			if st, k := res.Resolve(x); st == ref.Inside {
				fn(ck{len(r.stores) + d, k})
				break
			}
		}
	}
}

// isCopy reports whether c is a copy in a bucket (not a store's blob).
func (r *run) isCopy(c ck) bool { return c.s >= len(r.stores) }

func (r *run) destOf(c ck) *dest { return r.dests[c.s-len(r.stores)] }

// copyCand is the candidate for the copy of c.key in the bucket d, proven
// by p, made from the store s; nil when p is not the proof of a copy.
func (r *run) copyCand(c ck, p migrate.Proof, s int) *Blob {
	b := r.cands[c]
	if b == nil {
		b = &Blob{Store: r.rep.Stores[s], Key: c.key, Size: p.Size, SHA256: p.Digest(), Bucket: r.destOf(c).loc, at: c}
		r.cands[c] = b
	}
	return b
}

// linkCopies adds, for every candidate of a store, its proven copies in
// the buckets as candidates that go and stay with it, and links the copies
// the forgotten owners name to their sources when those are candidates.
func (r *run) linkCopies() {
	r.copyOf = map[ck]ck{}
	var stores []ck
	for c := range r.cands {
		if !r.isCopy(c) {
			stores = append(stores, c)
		}
	}
	for _, src := range stores {
		for d, ds := range r.dests {
			p, s, ok := ds.proof(src.key)
			if !ok || s != src.s {
				continue
			}
			c := ck{len(r.stores) + d, src.key}
			cb := r.copyCand(c, p, s)
			r.copyOf[c] = src
			r.join(src, c)
			// The receipt says the copy with its source: the references to
			// the copy dangle when the source goes.
			r.cands[src].References += cb.References
			cb.References = 0
		}
	}
}

// shared says why the bucket d may hold its copies for a store this run
// does not read, or "". With content-addressed names, a second store
// migrated into the bucket proves the first one's objects as its own, and
// its sessions name them: a copy is deleted only when every migration the
// bucket records is one whose journal this run read, and every such
// journal is recorded there (a journal without its record is of a
// migration made before they were kept; whether another store's shares
// the bucket is then unknown).
func (r *run) shared(ctx context.Context, d *dest) string {
	claims, err := migrate.Claims(ctx, d.st)
	if err != nil {
		return fmt.Sprintf("the copies in %s are left alone: its migrations' records cannot be read: %v", d.loc, err)
	}
	for _, j := range d.from {
		if _, ok := claims[j.id]; !ok {
			return fmt.Sprintf("the copies in %s are left alone: it holds no record of the migration of migrate's journal %s (made before mediactl kept them, or removed), so whether it holds another store's copies too is unknown; run that migrate again to record it", d.loc, j.path)
		}
	}
	var others []string
	for id, c := range claims {
		switch {
		case r.ownIDs[id]:
		case c.Above != nil:
			others = append(others, fmt.Sprintf("a store migrated into the bucket's folder %q above it (record %s)", *c.Above, id))
		default:
			others = append(others, fmt.Sprintf("%s (record %s)", c.From, id))
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		return fmt.Sprintf("the copies in %s are left alone: it holds copies of other migrations too, whose sessions may name the same objects: from %s; forget with those stores too, or remove the copies by hand", d.loc, strings.Join(others, ", "))
	}
	return ""
}

// sharedNow reports whether the bucket d may hold its copies for another
// store (shared), asking once per bucket of memo; the run fails once per
// bucket, saying why.
func (r *run) sharedNow(ctx context.Context, memo map[*dest]bool, d *dest) bool {
	if s, ok := memo[d]; ok {
		return s
	}
	why := r.shared(ctx, d)
	memo[d] = why != ""
	if why != "" {
		r.fail("forget: " + why)
	}
	return memo[d]
}

// keepShared keeps every copy candidate in a bucket that may hold it for
// another store (shared), and one the migration found there.
func (r *run) keepShared(ctx context.Context, keep map[ck]string) {
	memo := map[*dest]bool{}
	found := make([]int, len(r.dests))
	for c := range r.cands {
		if !r.isCopy(c) || keep[c] != "" {
			continue
		}
		i := c.s - len(r.stores)
		if p, _, ok := r.dests[i].proof(c.key); ok && p.Found {
			keep[c] = KeptCopyFound
			found[i]++
			continue
		}
		if r.sharedNow(ctx, memo, r.dests[i]) {
			keep[c] = KeptCopyShared
		}
	}
	for i, n := range found {
		if n > 0 {
			r.fail(fmt.Sprintf("forget: %d copies in %s are left alone: the migration found them in the bucket already and proved them, rather than uploading them, so they may be another store's objects too (one whose migration left no record); remove them by hand once no other store's sessions name them", n, r.dests[i].loc))
		}
	}
}

// copyWhere is how the receipt says a copy was removed.
func copyWhere(d *dest, key string) string { return "copy " + d.loc + " (" + key + ")" }

// mismatch says why the object e is not the proven copy b, or "".
func mismatch(d *dest, b *Blob, e store.Entry) string {
	switch {
	case e.Size != b.Size:
		return fmt.Sprintf("copy %s in %s is %d bytes, not the %d the journal proved: left alone", b.Key, d.loc, e.Size, b.Size)
	case e.Metadata[migrate.MetadataKey] != b.SHA256:
		// Other bytes under the key since the copy was proven: not the
		// erased blob's copy, and perhaps someone's.
		return fmt.Sprintf("copy %s in %s does not carry the sha256 the journal proved: left alone", b.Key, d.loc)
	}
	return ""
}

// statCopies looks at the copies among the blobs to erase as they are now:
// one gone is no candidate (its references dangled before, unless its
// source goes now), and one that is no longer the proven copy is left
// alone and said. A dry run notes where each copy would go from.
func (r *run) statCopies(ctx context.Context, erase []*Blob) []*Blob {
	var out []*Blob
	for _, b := range erase {
		if !r.isCopy(b.at) {
			out = append(out, b)
			continue
		}
		d := r.destOf(b.at)
		src, linked := r.copyOf[b.at]
		e, err := d.st.Stat(ctx, b.Key)
		switch {
		case errors.Is(err, store.ErrNotExist):
			if !linked {
				r.rep.AlreadyDangling += b.References
			}
			continue
		case err != nil:
			r.fail(fmt.Sprintf("forget: copy %s in %s: %v", b.Key, d.loc, err))
			r.keep(b, "could not be removed: "+err.Error())
			continue
		case mismatch(d, b, e) != "":
			r.fail("forget: " + mismatch(d, b, e))
			r.keep(b, KeptCopyChanged)
			continue
		}
		if r.rep.DryRun {
			to := b
			if linked {
				to = r.cands[src]
			}
			to.copies = append(to.copies, copyWhere(d, b.Key))
		}
		out = append(out, b)
	}
	return out
}

// deleteCopies deletes, after the read that follows the moves, the copies
// among pending: those only the forgotten owners name, and those of the
// erased blobs (not of one whose removal failed). Each is checked right
// before its delete: one that is no longer the proven copy, or was written
// since the run began, is left alone. skipped are the copies not deleted
// that the receipt does not list as erased.
func (r *run) deleteCopies(ctx context.Context, pending map[ck]*Blob, failed, skipped map[ck]bool) {
	var copies []ck
	for c := range pending {
		if r.isCopy(c) {
			copies = append(copies, c)
		}
	}
	slices.SortFunc(copies, func(a, b ck) int { return strings.Compare(fmt.Sprint(a.s)+a.key, fmt.Sprint(b.s)+b.key) })
	// The buckets' records once more, right before the deletes: a store
	// migrated into one since the run began may have proven a copy as its own.
	shared := map[*dest]bool{}
	for _, c := range copies {
		b := pending[c]
		if r.sharedNow(ctx, shared, r.destOf(c)) {
			r.keep(b, KeptCopyShared)
			skipped[c] = true
			continue
		}
		to := b
		src, linked := r.copyOf[c]
		if linked {
			if pending[src] == nil || failed[src] {
				skipped[c] = true
				continue // its source stays: so does the copy
			}
			to = pending[src]
		}
		fail := func(why string) {
			r.fail("forget: " + why)
			failed[c], skipped[c] = true, true
			if linked {
				failed[src] = true
			}
		}
		d := r.destOf(c)
		e, err := d.st.Stat(ctx, c.key)
		switch {
		case errors.Is(err, store.ErrNotExist):
			if to == b {
				b.copies = append(b.copies, copyWhere(d, c.key)+": gone before its delete")
			}
			continue
		case err != nil:
			fail(fmt.Sprintf("copy %s in %s: %v", c.key, d.loc, err))
			r.keep(b, "could not be removed: "+err.Error())
			continue
		case mismatch(d, b, e) != "":
			r.fail("forget: " + mismatch(d, b, e))
			r.keep(b, KeptCopyChanged)
			skipped[c] = true
			continue
		case !e.ModTime.IsZero() && e.ModTime.After(r.started.Add(-clockLag)):
			// Uploaded again during the run: a writer re-used it.
			r.keep(b, KeptChanged)
			skipped[c] = true
			continue
		}
		if err := d.st.Delete(ctx, c.key); err != nil && !errors.Is(err, store.ErrNotExist) {
			fail(fmt.Sprintf("delete copy %s in %s: %v", c.key, d.loc, err))
			r.keep(b, "could not be removed: "+err.Error())
			continue
		}
		to.copies = append(to.copies, copyWhere(d, c.key))
	}
}
