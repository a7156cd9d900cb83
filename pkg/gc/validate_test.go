package gc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/usage"
)

// Options that cannot be used are usage errors, refused by Validate and by
// Run before any store is read; the ones gc's command line builds pass.
func TestValidate(t *testing.T) {
	sh := shard.Spec{K: 1, N: 4}
	for name, o := range map[string]gc.RunOptions{
		"unknown policy":          {Options: gc.Options{Policy: "lru"}},
		"age without a max age":   {Options: gc.Options{Policy: gc.Age}},
		"max age with refcount":   {Options: gc.Options{MaxAge: 1}},
		"keep-referenced refcnt":  {Options: gc.Options{KeepReferenced: true}},
		"size cap with age":       {Options: gc.Options{Policy: gc.Age, MaxAge: 1, MaxSize: 10}},
		"size cap on a shard":     {Options: gc.Options{MaxSize: 10, Shard: sh}},
		"negative min age":        {Options: gc.Options{MinAge: -5}},
		"no-trash without delete": {NoTrash: true},
		"no-trash and copy":       {Delete: true, NoTrash: true, CopyToTrash: true},
		"count limit on a shard":  {Options: gc.Options{Shard: sh}, Delete: true, Guards: gc.Guards{MaxDeleteCount: 10}},
		"percent over 100":        {Guards: gc.Guards{MaxDeletePercent: 150}},
	} {
		err := o.Validate()
		var oe *gc.OptionError
		if !errors.As(err, &oe) || !errors.Is(err, usage.Err) {
			t.Errorf("%s: Validate = %v, want a usage *OptionError", name, err)
		}
	}
	for name, o := range map[string]gc.RunOptions{
		"defaults":          {},
		"age, kept":         {Options: gc.Options{Policy: gc.Age, MaxAge: 1, KeepReferenced: true}},
		"size cap":          {Options: gc.Options{MaxSize: 10}},
		"shard, percentage": {Options: gc.Options{Shard: sh}, Delete: true, Guards: gc.Guards{MaxDeletePercent: 10}},
		"no min age":        {Options: gc.Options{MinAge: -1}, Delete: true, NoTrash: true},
	} {
		if err := o.Validate(); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := gc.Run(context.Background(), gc.RunOptions{Stores: []store.Store{st}, NoTrash: true}); !errors.Is(err, usage.Err) {
		t.Errorf("Run with NoTrash and no Delete = %v, want the usage error", err)
	}
}
