//go:build !unix

package replay

// entryOpenFlags: no O_NOFOLLOW here; the os.Root keeps a link from leading
// outside the cache, and the entry is hashed before it is served.
const entryOpenFlags = 0
