package trash

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mediactl/mediactl/pkg/store"
)

// bucketJobs is how many requests a bucket's sweep has in flight when the
// caller does not say (Options.Jobs): each Stat or copy is a round trip of a
// few milliseconds in which the client only waits, and services serve
// thousands of them a second, so 32 keep a bucket busy where rclone's
// default of 8 checkers leaves it waiting, while staying far below S3's
// 3,500 writes a second per prefix, past which it answers SlowDown.
const bucketJobs = 32

// bucketBatch is how many blobs one round of a bucket's sweep checks and
// removes: a page of a listing, a DeleteObjects request. With the trash it
// bounds the copies made before the second check and the sources' delete.
const bucketBatch = 1000

// deletesInFlight is how many rounds' DeleteMany may still run, without the
// trash, while the next round is checked: a service such as SeaweedFS works
// through a DeleteObjects request one key after the other, so the check of
// the next keys need not wait for it, and several requests keep it busy.
const deletesInFlight = 4

// denseShare: the items are checked again by listing their key range when
// they are at least one blob in denseShare of the store (Options.StoreBlobs).
// A page of the listing describes 1,000 blobs in one request, where a Stat
// describes one; when the items are that dense, the pages that describe a
// batch of 1,000 are at most denseShare, against 1,000/Jobs rounds of Stats.
const denseShare = 4

// sweepBucket removes the items from a bucket in batches of bucketBatch:
// each batch is checked again (stillGoes, for every blob), then, without the
// trash, deleted in one DeleteMany, which runs while the next batch is
// checked (up to deletesInFlight at once); with the trash, copied into the
// trash on the service's side, Jobs copies at a time, checked again — a
// writer may have replaced a blob while it was copied — and only then are
// the sources whose copy succeeded deleted in one DeleteMany. A blob whose
// copy failed keeps its source. Once a batch's deletes have begun, it is
// finished even when ctx is cancelled (the move in flight); the batches not
// begun are counted in NotAttempted.
func (m *mover) sweepBucket(ctx context.Context, br store.BatchRemover, items Items) error {
	n := items.Len()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	dense := m.opts.StoreBlobs > 0 && int64(n)*denseShare >= m.opts.StoreBlobs
	if dense {
		// Consecutive keys: a batch's key range then holds few other blobs.
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(items.At(a).Key, items.At(b).Key) })
	}
	var deleting sync.WaitGroup
	inFlight := make(chan struct{}, deletesInFlight)
	for start := 0; start < n; start += bucketBatch {
		if err := ctx.Err(); err != nil {
			deleting.Wait()
			m.res.NotAttempted += int64(n - start)
			return err
		}
		batch := make([]Item, 0, min(n-start, bucketBatch))
		for _, i := range order[start:min(start+bucketBatch, n)] {
			batch = append(batch, items.At(i))
		}
		if !m.opts.NoTrash {
			goes, _ := m.checkBatch(ctx, br, batch, dense)
			m.trashBatch(ctx, br, goes, dense)
			continue
		}
		inFlight <- struct{}{} // before the check: checked blobs go at once
		goes, etags := m.checkBatch(ctx, br, batch, dense)
		deleting.Add(1)
		go func() {
			defer func() { <-inFlight; deleting.Done() }()
			m.deleteBatch(ctx, br, goes, etags, dense)
		}()
	}
	deleting.Wait()
	if m.res.NotAttempted > 0 {
		return ctx.Err()
	}
	return nil
}

// jobs is the concurrency of a bucket's sweep.
func (m *mover) jobs() int {
	if m.opts.Jobs > 0 {
		return m.opts.Jobs
	}
	return bucketJobs
}

// describe describes the batch's blobs as the store has them now: by listing
// their key range when dense (the batch is sorted by key), else by a Stat
// each, Jobs at a time. A blob the listing does not show is ErrNotExist.
func (m *mover) describe(ctx context.Context, br store.BatchRemover, batch []Item, dense bool) ([]store.Entry, []error) {
	now := make([]store.Entry, len(batch))
	errs := make([]error, len(batch))
	if len(batch) == 0 {
		return now, errs
	}
	if dense {
		// A key no listing can show fails alone, and does not bound the range.
		at := make(map[string]int, len(batch))
		var first, last string
		for i, it := range batch {
			if err := store.ValidKey(it.Key); err != nil {
				errs[i] = fmt.Errorf("trash: %s: %w", m.st.Location(), err)
				continue
			}
			at[it.Key] = i
			errs[i] = fmt.Errorf("trash: %s: %s: %w", m.st.Location(), it.Key, store.ErrNotExist)
			if first == "" || it.Key < first {
				first = it.Key
			}
			last = max(last, it.Key)
		}
		if len(at) == 0 {
			return now, errs
		}
		err := br.ListRange(ctx, first, last, func(e store.Entry) error {
			if i, ok := at[e.Key]; ok {
				now[i], errs[i] = e, nil
			}
			return nil
		})
		if err != nil {
			for _, i := range at {
				errs[i] = err
			}
		}
		return now, errs
	}
	m.each(ctx, len(batch), func(i int) {
		now[i], errs[i] = m.st.Stat(ctx, batch[i].Key)
	})
	return now, errs
}

// each runs fn(i) for i in [0, n), Jobs at a time; once ctx is cancelled it
// starts no more, and fn(i) is not called for the rest.
func (m *mover) each(ctx context.Context, n int, fn func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(m.jobs(), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				fn(i)
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
}

// checkBatch checks every blob of the batch again (stillGoes) and returns
// those that may still go, with the ETags they were described with (a
// delete on condition of it closes the window between this check and the
// delete, where the store can: BatchRemover.DeletesIfMatch); the others are
// recorded as skipped, failed, or, when ctx was cancelled before they were
// described, not attempted.
func (m *mover) checkBatch(ctx context.Context, br store.BatchRemover, batch []Item, dense bool) ([]Item, []string) {
	now, errs := m.describe(ctx, br, batch, dense)
	m.mu.Lock() // a previous round's deletes may be recording theirs
	defer m.mu.Unlock()
	goes := make([]Item, 0, len(batch))
	etags := make([]string, 0, len(batch))
	for i, it := range batch {
		if errs[i] == nil && now[i].Key == "" || interrupted(ctx, errs[i]) {
			m.res.NotAttempted++ // never described: the run stopped first
			continue
		}
		switch skip, err := m.stillGoes(it, now[i], errs[i]); {
		case err != nil:
			m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error()})
		case skip != "":
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, skip})
		default:
			goes = append(goes, it)
			etags = append(etags, now[i].ETag)
		}
	}
	return goes, etags
}

// keptError is recheck's answer for a blob that no longer goes.
type keptError struct{ reason string }

func (e *keptError) Error() string { return e.reason }

// recheck is DeleteMany's check of items before it sends them again after
// the service asked it to slow down: the pause may last seconds, in which
// the runtime may upload a blob again under the same name, so each is
// checked (stillGoes) as it was before the first request. A blob that no
// longer goes gets a *keptError; one that cannot be described, its error;
// one gone meanwhile, ErrNotExist, as DeleteMany reports a key gone.
func (m *mover) recheck(br store.BatchRemover, items []Item, dense bool) store.Recheck {
	return func(ctx context.Context, idx []int) []error {
		sub := make([]Item, len(idx))
		for j, i := range idx {
			sub[j] = items[i]
		}
		now, errs := m.describe(ctx, br, sub, dense)
		why := make([]error, len(idx))
		for j, it := range sub {
			if errs[j] == nil && now[j].Key == "" {
				why[j] = fmt.Errorf("trash: %s: %s: not checked again before it was to be sent again: %w", m.st.Location(), it.Key, ctx.Err())
				continue
			}
			switch skip, err := m.stillGoes(it, now[j], errs[j]); {
			case errors.Is(errs[j], store.ErrNotExist):
				// Gone as if deleted: with the trash, its copy is what is left.
				why[j] = errs[j]
			case err != nil:
				why[j] = err
			case skip != "":
				why[j] = &keptError{skip + ", while the service asked to slow down"}
			}
		}
		return why
	}
}

// deleteBatch deletes blobs checked a moment ago, for good, each while it
// still has the ETag it was checked with where the store can tell. The
// request is not cancelled with ctx: it is the move in flight.
func (m *mover) deleteBatch(ctx context.Context, br store.BatchRemover, goes []Item, etags []string, dense bool) {
	if len(goes) == 0 {
		return
	}
	keys := make([]string, len(goes))
	for i, it := range goes {
		keys[i] = it.Key
	}
	fctx := context.WithoutCancel(ctx)
	var seq int
	var lines []Deleted
	if log := m.opts.Log; log != nil {
		// The record first: a delete is never sent that it does not list.
		var err error
		if seq, lines, err = log.record(fctx, goes, etags); err != nil {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, it := range goes {
				m.res.Failed = append(m.res.Failed, Skip{it.Key, "not deleted: " + err.Error()})
			}
			return
		}
	}
	errs := br.DeleteMany(fctx, keys, etags, m.recheck(br, goes, dense))
	if log := m.opts.Log; log != nil {
		sent := make([]bool, len(errs))
		for i, err := range errs {
			var kept *keptError
			sent[i] = !errors.As(err, &kept) && !errors.Is(err, store.ErrChanged)
		}
		log.settle(fctx, seq, lines, sent)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, err := range errs {
		it := goes[i]
		var kept *keptError
		switch {
		case err == nil:
			m.moved(it)
		case errors.As(err, &kept):
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, kept.reason})
		case errors.Is(err, store.ErrChanged):
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, reasonChanged})
		case errors.Is(err, store.ErrNotExist):
			// Only the check before a resend finds a key gone (a delete of a
			// missing key succeeds): its delete was sent, and the answer was
			// lost or refused after the service acted on it. Deleted.
			m.moved(it)
		default:
			m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error()})
		}
	}
}

// trashBatch moves blobs checked a moment ago into the trash: copies first,
// Jobs at a time, then a second check of the copied blobs, then one
// DeleteMany of the sources that are still what was copied.
func (m *mover) trashBatch(ctx context.Context, br store.BatchRemover, goes []Item, dense bool) {
	name := func(it Item) string { return Dir + "/" + m.res.Run + "/" + it.Key }
	// An unwanted copy is removed on a context of its own: it is cleanup.
	dropCopy := func(it Item) { _ = m.in.DeleteInternal(context.WithoutCancel(ctx), name(it)) }
	copyErrs := make([]error, len(goes))
	started := make([]bool, len(goes))
	m.each(ctx, len(goes), func(i int) {
		started[i] = true
		copyErrs[i] = store.RetryThrottled(ctx, func() error { return br.CopyToInternal(ctx, goes[i].Key, name(goes[i])) })
	})
	copied := make([]Item, 0, len(goes))
	for i, it := range goes {
		switch err := copyErrs[i]; {
		case !started[i]:
			m.res.NotAttempted++
		case err == nil:
			copied = append(copied, it)
		case interrupted(ctx, err):
			m.res.NotAttempted++
			dropCopy(it) // the service may have made it all the same
		case errors.Is(err, store.ErrNotExist):
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, "gone since the plan"})
		default:
			m.res.Failed = append(m.res.Failed, Skip{it.Key, "copy into the trash: " + err.Error()})
			dropCopy(it)
		}
	}
	if len(copied) == 0 {
		return
	}
	// The rest of the batch is the move in flight: it ends even if ctx does.
	fctx := context.WithoutCancel(ctx)
	now, errs := m.describe(fctx, br, copied, dense)
	sources := make([]Item, 0, len(copied))
	etags := make([]string, 0, len(copied))
	for i, it := range copied {
		switch skip, err := m.stillGoes(it, now[i], errs[i]); {
		case err != nil:
			m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error()})
			dropCopy(it)
		case skip != "":
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, skip + ", while it was copied into the trash"})
			dropCopy(it)
		default:
			sources = append(sources, it)
			etags = append(etags, now[i].ETag)
		}
	}
	keys := make([]string, len(sources))
	for i, it := range sources {
		keys[i] = it.Key
	}
	for i, err := range br.DeleteMany(fctx, keys, etags, m.recheck(br, sources, dense)) {
		it := sources[i]
		var kept *keptError
		if errors.As(err, &kept) {
			// Never sent again: the source stays, and so the copy goes.
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, kept.reason + ", while it was copied into the trash"})
			dropCopy(it)
			continue
		}
		if errors.Is(err, store.ErrChanged) {
			// Uploaded again after the second check: that upload stays.
			m.res.Skipped = append(m.res.Skipped, Skip{it.Key, reasonChanged + ", while it was copied into the trash"})
			dropCopy(it)
			continue
		}
		if err == nil || errors.Is(err, store.ErrNotExist) {
			m.moved(it) // in the trash, and only there
			continue
		}
		// The source may be gone all the same (a lost response): the copy
		// stays unless the source is still there.
		if _, serr := m.st.Stat(fctx, it.Key); errors.Is(serr, store.ErrNotExist) {
			m.moved(it)
			continue
		} else if serr == nil {
			dropCopy(it)
			m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error()})
			continue
		}
		m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error() + " (a copy is in trash run " + m.res.Run + ")"})
	}
}
