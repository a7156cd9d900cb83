package store_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestDeleteManyKeyErrors: the keys a DeleteObjects response reports as
// failed, or does not mention, are reported and still there; a key the
// service asked to slow down for is checked again (recheck) before each time
// it is sent again, and removed; every other key is removed. The server is a real S3 implementation; the failures are made
// in front of it, by taking those keys out of the request it receives.
func TestDeleteManyKeyErrors(t *testing.T) {
	faults, wrap := storetest.NewDeleteFaults()
	srv := storetest.StartS3(t, wrap)
	// A prefixed store: the response names full keys, DeleteMany store keys.
	st := openT(t, strings.Replace(srv.Bucket(t, "faults"), "?", "/media/?", 1))
	defer st.Close()
	br, ok := store.AsBatchRemover(st)
	if !ok {
		t.Fatal("an S3 store without BatchRemover")
	}
	var keys []string
	for i := range 2500 { // three requests at least
		k := fmt.Sprintf("%04d.png", i)
		if err := st.Put(ctx, k, strings.NewReader("x"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := st.Put(ctx, "kept.png", strings.NewReader("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	faults.Fail("media/0007.png", "AccessDenied", 0)
	faults.Fail("media/1500.png", "InternalError", 0)
	faults.Fail("media/2499.png", "", 0) // neither deleted nor failed
	faults.Fail("media/0100.png", "SlowDown", 2)
	faults.Fail("media/2000.png", "SlowDown", 1)

	var rechecked sync.Map // key: times checked again
	recheck := func(_ context.Context, idx []int) []error {
		for _, i := range idx {
			n, _ := rechecked.LoadOrStore(keys[i], new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
		}
		return make([]error, len(idx))
	}
	errs := br.DeleteMany(ctx, keys, nil, recheck)
	for i, k := range keys {
		var kerr *store.KeyError
		switch k {
		case "0007.png", "1500.png":
			if !errors.As(errs[i], &kerr) || kerr.Code != map[string]string{"0007.png": "AccessDenied", "1500.png": "InternalError"}[k] || errors.Is(errs[i], store.ErrNotExist) {
				t.Errorf("%s: %v, want its key error", k, errs[i])
			}
		case "2499.png":
			if !errors.Is(errs[i], store.ErrNotConfirmed) {
				t.Errorf("%s: %v, want ErrNotConfirmed", k, errs[i])
			}
		default:
			if errs[i] != nil {
				t.Errorf("%s: %v", k, errs[i])
			}
		}
	}
	var left []string
	if err := st.List(ctx, "", func(e store.Entry) error { left = append(left, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"0007.png", "1500.png", "2499.png", "kept.png"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if n := faults.Seen("media/0100.png"); n != 3 {
		t.Errorf("a key slowed down twice was sent %d times, want 3", n)
	}
	if n := faults.Seen("media/2000.png"); n != 2 {
		t.Errorf("a key slowed down once was sent %d times, want 2", n)
	}
	rechecked.Range(func(k, n any) bool {
		if want := map[any]int32{"0100.png": 2, "2000.png": 1}[k]; n.(*atomic.Int32).Load() != want {
			t.Errorf("%s was checked again %d times, want %d", k, n.(*atomic.Int32).Load(), want)
		}
		return true
	})
	if n := faults.Seen("media/0007.png"); n != 1 {
		t.Errorf("a key that failed for good was sent %d times, want 1", n)
	}
	if n := faults.Requests(); n < 3+2 {
		t.Errorf("%d DeleteObjects requests, want at least 3 for 2,500 keys and 2 for the keys slowed down", n)
	}
}

// TestDeleteManyThrottled: a service that answers 503 SlowDown to the whole
// DeleteObjects request, longer than the SDK retries on its own, still has
// every key removed, each request after a SlowDown checked again first (the
// SDK's own retries, which check nothing, are off).
func TestDeleteManyThrottled(t *testing.T) {
	th, wrap := storetest.NewSlowDown(http.MethodPost, 4)
	srv := storetest.StartS3(t, wrap)
	st := openT(t, srv.Bucket(t, "slow"))
	defer st.Close()
	br, _ := store.AsBatchRemover(st)
	keys := []string{"a", "b/c", "d"}
	for _, k := range keys {
		if err := st.Put(ctx, k, strings.NewReader(k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var rechecks atomic.Int32
	recheck := func(_ context.Context, idx []int) []error {
		rechecks.Add(1)
		return make([]error, len(idx))
	}
	for i, err := range br.DeleteMany(ctx, keys, nil, recheck) {
		if err != nil {
			t.Errorf("%s: %v", keys[i], err)
		}
	}
	if n := th.Refused(); n < 4 {
		t.Errorf("%d SlowDown answers, want 4", n)
	}
	if n := rechecks.Load(); n != int32(th.Refused()) {
		t.Errorf("the keys were checked again %d times for %d SlowDown answers", n, th.Refused())
	}
	if err := st.List(ctx, "", func(e store.Entry) error { return fmt.Errorf("%s is still there", e.Key) }); err != nil {
		t.Error(err)
	}
}

// TestDeleteManyThrottledKeyChanged: a key the service asked to slow down
// for is not sent again when recheck says it no longer goes (a writer
// uploaded it again during the pause): it stays, with recheck's reason as
// its outcome; with no recheck a throttled key is never sent again, and its
// outcome is the SlowDown.
func TestDeleteManyThrottledKeyChanged(t *testing.T) {
	faults, wrap := storetest.NewDeleteFaults()
	srv := storetest.StartS3(t, wrap)
	st := openT(t, srv.Bucket(t, "changed"))
	defer st.Close()
	br, _ := store.AsBatchRemover(st)
	keys := []string{"again.png", "plain.png", "slowed.png"}
	for _, k := range keys {
		if err := st.Put(ctx, k, strings.NewReader(k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	faults.Fail("again.png", "SlowDown", 1)
	faults.Fail("slowed.png", "SlowDown", 1)
	uploaded := errors.New("uploaded again")
	errs := br.DeleteMany(ctx, keys, nil, func(_ context.Context, idx []int) []error {
		why := make([]error, len(idx))
		for j, i := range idx {
			if keys[i] == "again.png" {
				why[j] = uploaded
			}
		}
		return why
	})
	if !errors.Is(errs[0], uploaded) || errs[1] != nil || errs[2] != nil {
		t.Errorf("outcomes %v, want recheck's reason, nil, nil", errs)
	}
	if n := faults.Seen("again.png"); n != 1 {
		t.Errorf("a key recheck kept was sent %d times, want 1", n)
	}
	var left []string
	if err := st.List(ctx, "", func(e store.Entry) error { left = append(left, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"again.png"}) {
		t.Errorf("left %v, want again.png", left)
	}

	faults.Fail("again.png", "SlowDown", 2)
	errs = br.DeleteMany(ctx, []string{"again.png"}, nil, nil)
	if !store.IsThrottled(errs[0]) || faults.Seen("again.png") != 1 {
		t.Errorf("with no recheck: %v, sent %d times; want the SlowDown, sent once", errs[0], faults.Seen("again.png"))
	}
	if _, err := st.Stat(ctx, "again.png"); err != nil {
		t.Errorf("with no recheck the throttled key is gone: %v", err)
	}
}

// A run stopped while RetryThrottled waits out a throttled request ends with
// the context's error (the request was refused, never done: the caller counts
// it as not attempted), and still says the service throttled it.
func TestRetryThrottledStoppedDuringThePause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := store.RetryThrottled(ctx, func() error {
		calls++
		cancel()
		return &smithy.GenericAPIError{Code: "SlowDown", Message: "Please reduce your request rate."}
	})
	if calls != 1 || !errors.Is(err, context.Canceled) || !store.IsThrottled(err) {
		t.Fatalf("after %d calls: %v; want one call, context.Canceled, throttled", calls, err)
	}
}
