package main

// Which store and which trash folder a trash subcommand, gc or migrate
// --delete-source works on (--store, --trash-dir).

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// oneStoreTargets is oneStore with the targets it opened: their sessions.
// The caller closes them.
func oneStoreTargets(c *cli.Context, g *global) (store.Store, *targets, error) {
	t, err := openTargets(c, g)
	if err != nil {
		return nil, nil, err
	}
	if len(t.stores) != 1 {
		t.Close()
		return nil, nil, usageErr("give exactly one --store", "this command works on one store, %d given", len(t.stores))
	}
	if c.String("trash-dir") != "" {
		wrapped, err := withTrashDir(c, t.stores, trash.Owned)
		if err != nil {
			t.Close()
			return nil, nil, err
		}
		return wrapped[0], t, nil
	}
	return t.stores[0], t, nil
}

// oneStore opens the targets of a trash subcommand, which works on one store.
func oneStore(c *cli.Context, g *global) (store.Store, func(), error) {
	st, t, err := oneStoreTargets(c, g)
	if err != nil {
		return nil, nil, err
	}
	return st, t.Close, nil
}

// withTrashDir puts the trash of the one local store given into --trash-dir
// (trash.AtDir, for what the command does with it). One store only: two
// stores sharing a trash folder could have their runs mixed, and a restore
// would then put blobs into the wrong store.
func withTrashDir(c *cli.Context, stores []store.Store, use trash.Use) ([]store.Store, error) {
	dir := c.String("trash-dir")
	if len(stores) != 1 {
		return nil, usageErr("run gc once per store, each with its own --trash-dir", "--trash-dir works with exactly one store, %d given", len(stores))
	}
	st, err := trash.AtDir(stores[0], absOr(dir), use)
	switch {
	case errors.Is(err, trash.ErrNoTrashFolder):
		return nil, usageErr("give the folder the runs were moved into", "no trash folder at %s", absOr(dir))
	case err != nil:
		return nil, trashDirError("--trash-dir", err)
	}
	return []store.Store{st}, nil
}

// trashDirError words the errors of a folder given for removed blobs.
func trashDirError(flag string, err error) error {
	var pe *trash.PlaceError
	var oe *trash.OwnerError
	var ue *trash.UnclaimedError
	switch {
	case errors.As(err, &ue):
		return usageErr("give the folder this store's blobs were moved into; if "+ue.Dir+" holds its runs from before mediactl recorded the store, write "+ue.Store+" into "+ue.Record+" first",
			"%s %v", flag, err)
	case errors.As(err, &oe):
		return usageErr("give each store a trash directory of its own; if "+oe.Owner+" moved to "+oe.Store+", delete "+oe.Record+" first",
			"%s %v: its runs would be restored into, or purged from, the wrong store", flag, err)
	case errors.As(err, &pe):
		return usageErr("choose a directory outside the store, on the same file system, that does not contain it", "%s %v", flag, err)
	case errors.Is(err, trash.ErrNeedsLocal):
		return usageErr("on a bucket the trash is the key prefix .mediactl/trash/; drop "+flag, "%s needs a local store", flag)
	}
	return fmt.Errorf("%s: %w", flag, err)
}
