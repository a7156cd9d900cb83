package verify_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/verify"
)

// An interrupt is not a finding: the downloads it cuts short are counted as
// not attempted, never as unreadable blobs, and the run says it was
// interrupted.
func TestInterruptIsNotUnreadable(t *testing.T) {
	var stall atomic.Bool
	started := make(chan struct{}, 64)
	srv := storetest.StartS3(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stall.Load() && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" {
				started <- struct{}{}
				<-r.Context().Done() // a download that hangs until the client gives up
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	st, err := store.Open(ctx, srv.Bucket(t, "interrupted"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	for i := range 20 {
		b := []byte(fmt.Sprint("blob ", i))
		put(t, st, name(b, ".png"), b)
	}
	stall.Store(true)
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		<-started
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	rep, err := verify.Run(rctx, verify.Options{Store: st, Jobs: 4})
	must(t, err)
	if !rep.Interrupted || rep.Complete {
		t.Errorf("interrupted %v, complete %v; want an interrupted, incomplete run", rep.Interrupted, rep.Complete)
	}
	if rep.Counts[verify.Unreadable] != 0 || len(rep.Unreadable) != 0 {
		t.Errorf("%d unreadable %+v: an interrupt counted as a failure", rep.Counts[verify.Unreadable], rep.Unreadable)
	}
	if rep.NotAttempted == 0 {
		t.Error("no blob counted as not attempted")
	}
}
