package trash_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// cancelAfter cancels a context once n blobs were removed.
type cancelAfter struct {
	n      int64
	done   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Add(d int64) {
	if c.done.Add(d) == c.n {
		c.cancel()
	}
}

// TestBucketMoveInterrupted: a signal in the middle of a bucket's batch
// sweep, with the trash and without, finishes the batches in flight and
// starts no other: the blobs not reached are counted as not attempted, none is
// failed, and every blob is in the store or (with the trash) in the run, as
// counted — on mem:// (single deletes) and on S3 (DeleteObjects).
func TestBucketMoveInterrupted(t *testing.T) {
	for _, kind := range []string{"mem", "s3"} {
		for _, noTrash := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/no-trash=%v", kind, noTrash), func(t *testing.T) {
				u := "mem://"
				if kind == "s3" {
					u = storetest.StartS3(t, nil).Bucket(t, "interrupted")
				}
				bgctx := context.Background()
				st, err := store.Open(bgctx, u)
				must(t, err)
				defer st.Close()
				// Without the trash, rounds of 1,000 are checked while earlier
				// rounds' deletes run, up to 4: the sixth is checked only after
				// the first round's deletes, which cancel, are recorded.
				n := 2500
				if noTrash {
					n = 5500
				}
				for i := range n {
					content := fmt.Sprintf("blob %d", i)
					must(t, st.Put(bgctx, name(content), strings.NewReader(content), store.PutOptions{}))
				}
				// Described by the listing, as gc's plan describes them.
				var list trash.List
				must(t, st.List(bgctx, "", func(e store.Entry) error {
					list = append(list, trash.Item{Key: e.Key, Size: e.Size, ModTime: e.ModTime})
					return nil
				}))
				ctx, cancel := context.WithCancel(bgctx)
				defer cancel()
				progress := &cancelAfter{n: 10, cancel: cancel}
				res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{NoTrash: noTrash, StoreBlobs: int64(n), Progress: progress})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Move = %v, want the context's error", err)
				}
				removed := res.Trashed + res.Deleted
				if len(res.Failed) != 0 || len(res.Skipped) != 0 || removed < 10 || res.NotAttempted == 0 || removed+res.NotAttempted != int64(n) {
					t.Fatalf("removed %d, not attempted %d, skipped %v, failed %v", removed, res.NotAttempted, res.Skipped, res.Failed)
				}
				inStore := 0
				must(t, st.List(bgctx, "", func(store.Entry) error { inStore++; return nil }))
				if int64(inStore) != res.NotAttempted {
					t.Fatalf("%d blobs in the store, %d not attempted", inStore, res.NotAttempted)
				}
				if noTrash {
					return
				}
				in, _ := store.AsInternal(st)
				inTrash := 0
				must(t, in.ListInternal(bgctx, trash.Dir+"/"+res.Run+"/", func(e store.Entry) error {
					if !strings.HasSuffix(e.Key, "/.manifest.jsonl") && !strings.HasSuffix(e.Key, "/.run.json") {
						inTrash++
					}
					return nil
				}))
				if int64(inTrash) != res.Trashed {
					t.Fatalf("%d blobs in the trash run, %d trashed", inTrash, res.Trashed)
				}
			})
		}
	}
}

// TestBucketMoveBadKey: a key no store may name, among the items of a
// bucket's batch, fails alone; the batch's other blobs are checked and
// removed, and nothing outside the store is touched.
func TestBucketMoveBadKey(t *testing.T) {
	for _, noTrash := range []bool{false, true} {
		ctx := context.Background()
		st, err := store.Open(ctx, "mem://")
		must(t, err)
		defer st.Close()
		for _, k := range []string{"a.png", "m.png", "z.png"} {
			must(t, st.Put(ctx, k, strings.NewReader("bytes of "+k), store.PutOptions{}))
		}
		var list trash.List
		must(t, st.List(ctx, "", func(e store.Entry) error {
			list = append(list, trash.Item{Key: e.Key, Size: e.Size, ModTime: e.ModTime})
			return nil
		}))
		list = append(list, trash.Item{Key: "../outside.png", Size: 1}, trash.Item{Key: "0//x", Size: 1})
		res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{NoTrash: noTrash, StoreBlobs: 3})
		must(t, err)
		if res.Trashed+res.Deleted != 3 || len(res.Failed) != 2 || res.Failed[0].Key != "../outside.png" || res.Failed[1].Key != "0//x" {
			t.Fatalf("no-trash=%v: removed %d, failed %v, skipped %v", noTrash, res.Trashed+res.Deleted, res.Failed, res.Skipped)
		}
	}
}

// TestBucketSweepRechecksThrottledKeys: S3 answers a DeleteObjects request
// with a SlowDown for some of its keys (a 200 that deletes nothing of them),
// and the runtime uploads one of those keys again before the request is sent
// again. The re-sent request names only the keys that, checked again, are
// still what the plan described: the key uploaded again stays in the store
// and is reported skipped, with and without the trash; the key slowed down
// but unchanged is removed on the second request, as is the key the service
// deleted at once.
func TestBucketSweepRechecksThrottledKeys(t *testing.T) {
	for _, noTrash := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-trash=%v", noTrash), func(t *testing.T) {
			again, slowed, gone := name("uploaded again"), name("slowed down"), name("deleted at once")
			var srv *storetest.S3
			var once sync.Once
			wrap := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodPost || !r.URL.Query().Has("delete") {
						next.ServeHTTP(w, r)
						return
					}
					first := false
					once.Do(func() { first = true })
					if !first {
						next.ServeHTTP(w, r)
						return
					}
					io.Copy(io.Discard, r.Body)
					// The upload lands before the client reads the answer, so
					// before any pause it takes: other bytes, another size.
					content := "uploaded again, and longer this time"
					if _, err := srv.Backend.PutObject("throttled", again, map[string]string{}, strings.NewReader(content), int64(len(content)), nil); err != nil {
						http.Error(w, err.Error(), http.StatusInternalServerError)
						return
					}
					if _, err := srv.Backend.DeleteObject("throttled", gone); err != nil {
						http.Error(w, err.Error(), http.StatusInternalServerError)
						return
					}
					w.Header().Set("Content-Type", "application/xml")
					io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
						`<Deleted><Key>`+gone+`</Key></Deleted>`+
						`<Error><Key>`+again+`</Key><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`+
						`<Error><Key>`+slowed+`</Key><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`+
						`</DeleteResult>`)
				})
			}
			srv = storetest.StartS3(t, wrap)
			ctx := context.Background()
			st, err := store.Open(ctx, srv.Bucket(t, "throttled"))
			must(t, err)
			defer st.Close()
			for _, c := range []string{"uploaded again", "slowed down", "deleted at once"} {
				must(t, st.Put(ctx, name(c), strings.NewReader(c), store.PutOptions{}))
			}
			var list trash.List
			must(t, st.List(ctx, "", func(e store.Entry) error {
				list = append(list, trash.Item{Key: e.Key, Size: e.Size, ModTime: e.ModTime})
				return nil
			}))
			res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{NoTrash: noTrash, StoreBlobs: 3})
			must(t, err)
			if e, err := st.Stat(ctx, again); err != nil || e.Size != int64(len("uploaded again, and longer this time")) {
				t.Errorf("the blob uploaded again while the service asked to slow down: %+v, %v; want it in the store", e, err)
			}
			if len(res.Skipped) != 1 || res.Skipped[0].Key != again || !strings.Contains(res.Skipped[0].Reason, "changed since the plan") || len(res.Failed) != 0 {
				t.Errorf("skipped %v, failed %v; want %s skipped as changed", res.Skipped, res.Failed, again)
			}
			for _, k := range []string{slowed, gone} {
				if _, err := st.Stat(ctx, k); !errors.Is(err, store.ErrNotExist) {
					t.Errorf("%s: %v, want it removed", k, err)
				}
			}
			if removed := res.Trashed + res.Deleted; removed != 2 {
				t.Errorf("removed %d, want 2", removed)
			}
		})
	}
}

// TestAzureSweepKeepsWhatAWriterSavesAgain: gc's sweep of an Azure container,
// without the trash and with it, while a writer uploads blobs again (the
// same content, as a runtime does when a user sends an image again) ahead of
// the sweep's deletes: a batch's blobs are all checked before its deletes
// begin, so an upload of a blob of the batch not yet deleted lands between
// its check and its delete. An upload made during the sweep must be
// in the container afterwards, whether it came before the check (kept),
// after the delete (a new blob), or in between: there only the delete's
// If-Match on the ETag the check saw tells the new upload from the blob
// checked, size and time being alike.
func TestAzureSweepKeepsWhatAWriterSavesAgain(t *testing.T) {
	srv := storetest.StartAzurite(t)
	for _, noTrash := range []bool{true, false} {
		t.Run(fmt.Sprintf("no-trash=%v", noTrash), func(t *testing.T) {
			const (
				blobs   = 1000 // a batch of the sweep
				batch   = 1000
				writers = 8
			)
			ctx := context.Background()
			st, err := store.Open(ctx, srv.Container(t, "resave"))
			must(t, err)
			defer st.Close()
			contents := make([]string, blobs)
			keys := make([]string, blobs)
			for i := range blobs {
				contents[i] = fmt.Sprintf("blob %d", i)
				keys[i] = name(contents[i])
				must(t, st.Put(ctx, keys[i], strings.NewReader(contents[i]), store.PutOptions{}))
			}
			var items trash.List
			for _, k := range keys {
				e, err := st.Stat(ctx, k)
				must(t, err)
				items = append(items, trash.Item{Key: k, Size: e.Size, ModTime: e.ModTime})
			}
			gone := func(k string) bool {
				_, err := st.Stat(ctx, k)
				return errors.Is(err, store.ErrNotExist)
			}
			var done atomic.Bool
			saved := make(chan []string)
			go func() {
				var out []string
				var mu sync.Mutex
				for first := 0; first < blobs && !done.Load(); first += batch {
					// Once the batch's first blob is gone, its deletes have
					// begun, in key order from there: the writers upload
					// from its end backwards to meet them.
					for !done.Load() && !gone(keys[first]) {
					}
					var wg sync.WaitGroup
					for w := range writers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for i := first + batch - 1 - w; i > first && !done.Load(); i -= writers * 3 {
								if gone(keys[i]) {
									return // met the deletes
								}
								if err := st.Put(ctx, keys[i], strings.NewReader(contents[i]), store.PutOptions{}); err != nil {
									t.Error(err)
									return
								}
								mu.Lock()
								out = append(out, keys[i])
								mu.Unlock()
							}
						}()
					}
					wg.Wait()
				}
				saved <- out
			}()
			res := sweepBesideWriter(t, st, items, trash.Options{NoTrash: noTrash}, &done, saved, func(k string) error {
				_, err := st.Stat(ctx, k)
				return err
			})
			changed := 0
			for _, s := range res.Skipped {
				if strings.HasPrefix(s.Reason, "changed since the plan") {
					changed++
				}
			}
			if got := res.Deleted + res.Trashed + int64(len(res.Skipped)) + int64(len(res.Failed)) + res.NotAttempted; got != int64(len(items)) {
				t.Errorf("removed %d + skipped %d + failed %d + not attempted %d = %d, want %d", res.Deleted+res.Trashed, len(res.Skipped), len(res.Failed), res.NotAttempted, got, len(items))
			}
			if len(res.Failed) > 0 {
				t.Errorf("failed: %v", res.Failed[:min(3, len(res.Failed))])
			}
			if changed == 0 {
				t.Error("no upload landed between a check and its delete: the test did not test the window")
			}
			t.Logf("%d removed, %d kept (%d changed since the check)", res.Deleted+res.Trashed, len(res.Skipped), changed)
		})
	}
}

// TestLostDeleteAnswer: the service deletes a batch and its answer is lost;
// the check before the batch is sent again finds the blobs gone. They were
// deleted by this run, and are counted so, with the trash or without.
// Before, without the trash they were reported kept, "gone since the plan".
func TestLostDeleteAnswer(t *testing.T) {
	for _, noTrash := range []bool{false, true} {
		t.Run(fmt.Sprint("no-trash=", noTrash), func(t *testing.T) {
			lost, wrap := storetest.NewLostAnswer(func(r *http.Request) bool {
				return r.Method == http.MethodPost && r.URL.Query().Has("delete")
			})
			srv := storetest.StartS3(t, wrap)
			ctx := context.Background()
			st, err := store.Open(ctx, srv.Bucket(t, "media"))
			must(t, err)
			defer st.Close()
			for i := range 5 {
				c := fmt.Sprint("blob ", i)
				must(t, st.Put(ctx, name(c), strings.NewReader(c), store.PutOptions{}))
			}
			var list trash.List
			must(t, st.List(ctx, "", func(e store.Entry) error {
				list = append(list, trash.Item{Key: e.Key, Size: e.Size, ModTime: e.ModTime})
				return nil
			}))
			res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{NoTrash: noTrash, StoreBlobs: 5})
			must(t, err)
			if lost.Lost() == 0 {
				t.Fatal("no answer was lost: the test proves nothing")
			}
			if got := res.Trashed + res.Deleted; got != 5 || len(res.Skipped) != 0 || len(res.Failed) != 0 {
				t.Errorf("trashed %d, deleted %d, skipped %v, failed %v; want all 5 removed", res.Trashed, res.Deleted, res.Skipped, res.Failed)
			}
			left := 0
			must(t, st.List(ctx, "", func(store.Entry) error { left++; return nil }))
			if left != 0 {
				t.Errorf("%d blobs left in the store", left)
			}
		})
	}
}
