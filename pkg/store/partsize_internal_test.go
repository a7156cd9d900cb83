package store

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// On GCS a blob smaller than the client's 16 MiB chunk is uploaded with a
// chunk of its own size, in the service's 256 KiB steps; a size given by
// the caller, a reader that knows its length, or none (the client's chunk).
func TestGCSPartSizeFitsTheBlob(t *testing.T) {
	gs, s3 := &BucketStore{scheme: "gs"}, &BucketStore{scheme: "s3"}
	for _, tc := range []struct {
		s    *BucketStore
		r    io.Reader
		opts PutOptions
		want int
	}{
		{gs, nil, PutOptions{Size: 100 << 10}, 256 << 10},
		{gs, nil, PutOptions{Size: 256 << 10}, 256 << 10},
		{gs, nil, PutOptions{Size: 256<<10 + 1}, 512 << 10},
		{gs, strings.NewReader(strings.Repeat("x", 300<<10)), PutOptions{}, 512 << 10},
		{gs, bytes.NewReader(make([]byte, 5)), PutOptions{}, 256 << 10},
		{gs, io.MultiReader(strings.NewReader("x")), PutOptions{}, 0}, // length unknown
		{gs, nil, PutOptions{Size: 16 << 20}, 0},
		{gs, nil, PutOptions{Size: 1 << 30}, 0},
		{gs, nil, PutOptions{Size: 100, PartSize: 8 << 20}, 8 << 20}, // the caller's choice
		{s3, nil, PutOptions{Size: 100 << 10}, 0},
		{s3, nil, PutOptions{Size: 100 << 10, PartSize: 5 << 20}, 5 << 20},
	} {
		if got := tc.s.partSize(tc.r, tc.opts); got != tc.want {
			t.Errorf("%s, %T, %+v: part size %d, want %d", tc.s.scheme, tc.r, tc.opts, got, tc.want)
		}
	}
}
