package store_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestDeleteManyKeyErrors: the keys a DeleteObjects response reports as
// failed, or does not mention, are reported and still there; a key the
// service asked to slow down for is sent again and removed; every other key
// is removed. The server is a real S3 implementation; the failures are made
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

	errs := br.DeleteMany(ctx, keys)
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
	if n := faults.Seen("media/0007.png"); n != 1 {
		t.Errorf("a key that failed for good was sent %d times, want 1", n)
	}
	if n := faults.Requests(); n < 3+2 {
		t.Errorf("%d DeleteObjects requests, want at least 3 for 2,500 keys and 2 for the keys slowed down", n)
	}
}

// TestDeleteManyThrottled: a service that answers 503 SlowDown to the whole
// DeleteObjects request, longer than the SDK retries on its own, still has
// every key removed.
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
	for i, err := range br.DeleteMany(ctx, keys) {
		if err != nil {
			t.Errorf("%s: %v", keys[i], err)
		}
	}
	if n := th.Refused(); n < 4 {
		t.Errorf("%d SlowDown answers, want 4", n)
	}
	if err := st.List(ctx, "", func(e store.Entry) error { return fmt.Errorf("%s is still there", e.Key) }); err != nil {
		t.Error(err)
	}
}
