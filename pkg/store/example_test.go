package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
)

func Example() {
	dir, err := os.MkdirTemp("", "mediactl-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	// A directory path opens a local store; "s3://bucket/prefix/" and the like open
	// a bucket.
	s, err := store.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	for _, key := range []string{"u/t/uploads/f.png", "ab12.png"} {
		if err := s.Put(ctx, key, strings.NewReader("not really a png"), store.PutOptions{IfNotExist: true}); err != nil {
			panic(err)
		}
	}
	// Content-addressed writers never overwrite.
	err = s.Put(ctx, "ab12.png", strings.NewReader("other"), store.PutOptions{IfNotExist: true})
	fmt.Println("second put exists:", errors.Is(err, store.ErrExist))
	// Keys cannot leave the store.
	_, err = s.Open(ctx, "../etc/passwd")
	fmt.Println("traversal refused:", errors.Is(err, store.ErrInvalidKey))

	err = s.List(ctx, "", func(e store.Entry) error {
		fmt.Println(e.Key, e.Size, e.Mode)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// second put exists: true
	// traversal refused: true
	// ab12.png 16 -rw-------
	// u/t/uploads/f.png 16 -rw-------
}

func ExampleValidKey() {
	for _, key := range []string{"u/t/uploads/f.png", "../secret", "a//b", ".mediactl/trash/x"} {
		fmt.Println(store.ValidKey(key))
	}
	// Output:
	// <nil>
	// invalid key "../secret": has a ".." segment
	// invalid key "a//b": has an empty segment ("//" or a trailing "/")
	// invalid key ".mediactl/trash/x": .mediactl is mediactl's internal folder
}

// A caller asks for an optional capability by name, and falls back on the
// plain Store method when the store does not offer it.
func ExampleFeaturesOf() {
	dir, err := os.MkdirTemp("", "mediactl-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	for _, spec := range []string{dir, "mem://"} {
		s, err := store.Open(ctx, spec)
		if err != nil {
			panic(err)
		}
		list := s.List
		if ul, ok := store.AsUnorderedLister(s); ok {
			list = ul.ListUnordered // order does not matter here; memory does
		}
		if err := list(ctx, "", func(store.Entry) error { return nil }); err != nil {
			panic(err)
		}
		fmt.Println(store.FeaturesOf(s))
		s.Close()
	}
	// Output:
	// Internal,ListUnordered,ListKeys,MoveManyToInternal,MoveTo,ListSelected
	// Internal,ReportsMD5,DeleteMany,ListSelected,DeleteRecovery,RestoreVersion
}
