package store

import (
	"context"
	"strings"
)

// internalFoldersKey is the context key of WithInternalFolders' function.
type internalFoldersKey struct{}

// WithInternalFolders returns a context under which a store's listings (List,
// ListUnordered, ListSelected, ListKeys, ListEvery, whatever the store) also
// call found with the key of each folder named [InternalDir] they meet below
// the store's root ("old-pod/.mediactl"): another store's internal folder,
// whether or not it holds a file. Such a folder holds only empty folders
// after a restore of its store's only run, a purge that emptied its trash, or
// a run that moved nothing, and a listing of files alone would not show it.
// The store's own internal folder, at its root, is never reported; neither
// is a file or a link named like it. found is called from the goroutine that
// calls the listing's fn, before the entries inside the folder. A local store
// and a file:// bucket report each such folder once, where the listing's
// prefix lets it descend; any other bucket has no folders, and reports the
// folder of each "directory" placeholder (a key ending in "/") inside one,
// which its listing otherwise skips.
func WithInternalFolders(ctx context.Context, found func(key string)) context.Context {
	return context.WithValue(ctx, internalFoldersKey{}, found)
}

// internalFolders is the function WithInternalFolders put in ctx, or nil.
func internalFolders(ctx context.Context) func(key string) {
	found, _ := ctx.Value(internalFoldersKey{}).(func(key string))
	return found
}

// internalFolderOf returns the key of the folder named InternalDir, below
// the root, that the key p (a placeholder's, "a/.mediactl/trash/") lies in
// or names.
func internalFolderOf(p string) (string, bool) {
	t := strings.TrimSuffix(p, "/") + "/"
	i := strings.Index(t, "/"+InternalDir+"/")
	if i < 0 {
		return "", false
	}
	return t[:i+1+len(InternalDir)], true
}
